"""A tiny python:-spec agent for preview tests: asks two questions, then delivers flights and hotel."""

from __future__ import annotations


def respond(messages, tools):
    users = [m for m in messages if m["role"] == "user"]
    if len(users) == 1:
        return {"role": "assistant", "content": "好的！请问从哪里出发？几个人？"}
    if len(users) == 2:
        return {"role": "assistant", "content": "为你找到航班：\n1. 东航 MU523 08:00 起飞 ¥2300/人"}
    return {
        "role": "assistant",
        "content": "推荐酒店：难波日航酒店 ¥800/晚，第一天入住。\n行程安排：第一天 大阪城。",
    }
