"""移动套餐营业厅的工具（usersim 的测试领域）。"""

from __future__ import annotations


def _one(db: dict, table: str, key: str, value: str) -> dict:
    for row in db[table]:
        if str(row[key]) == str(value).strip():
            return row
    raise ValueError(f"{table} 中没有 {key}={value}")


def verify_subscriber(db, phone: str, id_last6: str) -> dict:
    """用手机号和身份证后六位核验机主身份。"""
    sub = _one(db, "subscribers", "phone", phone)
    if sub["id_last6"] != id_last6.strip():
        raise ValueError("身份核验失败：身份证后六位不匹配")
    return {"verified": True, "phone": sub["phone"], "name": sub["name"], "plan_id": sub["plan_id"]}


def list_plans(db) -> list:
    """可办理的全部套餐：月费（元）、流量（GB）、是否含国际漫游。"""
    return [dict(p) for p in db["plans"]]


def change_plan(db, phone: str, plan_id: str) -> dict:
    """为已核验的机主更换套餐，下月生效。"""
    sub = _one(db, "subscribers", "phone", phone)
    plan = _one(db, "plans", "plan_id", plan_id)
    sub["plan_id"] = plan["plan_id"]
    return {"phone": phone, "plan_id": plan["plan_id"], "effective": "下月 1 日"}
