"""`usersim run --ray*`: what is refused before any work (no Ray started, nothing written)."""

from __future__ import annotations

import sys

from tests.support.cli import usersim
from usersim.cli.ray_options import ray_config


def test_ray_without_the_package_names_the_distribution_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the [ray] extra were not installed
    out = tmp_path / "run"
    res = usersim("run", "--id", "B1-EI-01", "--ray", "local", "--out", str(out), check=False)
    assert res.returncode == 2, res.stderr
    assert "pip install 'usersim-harness[ray]'" in res.stderr
    assert not out.exists()


def test_ray_only_options_need_ray(tmp_path):
    for args in (["--ray-actors", "2"], ["--ray-runtime-env", __file__]):
        res = usersim("run", "--id", "B1-EI-01", *args, "--out", str(tmp_path / "run"), check=False)
        assert res.returncode == 2 and f"{args[0]} needs --ray" in res.stderr, res.stderr


def test_a_runtime_env_that_is_not_a_mapping_is_refused_with_its_file(tmp_path):
    env = tmp_path / "env.yaml"
    env.write_text("- pip\n- usersim-harness\n", encoding="utf-8")
    res = usersim(
        "run", "--id", "B1-EI-01", "--ray", "local", "--ray-runtime-env", str(env), "--out", str(tmp_path / "r"),
        check=False,
    )  # fmt: skip
    assert res.returncode == 2
    assert str(env) in res.stderr and "a runtime_env is a mapping" in res.stderr, res.stderr
    assert not (tmp_path / "r").exists()


def test_a_relative_working_dir_is_the_folder_beside_the_runtime_env_file(tmp_path, monkeypatch):
    (tmp_path / "project").mkdir()
    env = tmp_path / "project" / "ray.yaml"
    env.write_text("working_dir: .\npip: ['usersim-harness[ray]']\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # not where the file is
    fields = ray_config("auto", 3, env)
    assert fields["ray"] == "auto" and fields["ray_actors"] == 3
    assert fields["ray_runtime_env"] == {
        "working_dir": str((tmp_path / "project").resolve()),
        "pip": ["usersim-harness[ray]"],
    }
    remote = tmp_path / "remote.json"
    remote.write_text('{"working_dir": "s3://bucket/suite.zip"}', encoding="utf-8")
    assert ray_config("auto", None, remote)["ray_runtime_env"] == {"working_dir": "s3://bucket/suite.zip"}


def test_more_ray_actors_than_conversations_in_flight_is_refused_saying_what_concurrency_means(tmp_path):
    out = tmp_path / "run"
    res = usersim(
        "run", "--id", "B1-EI-01", "--ray", "local", "--ray-actors", "3", "--concurrency", "2",
        "--out", str(out), check=False,
    )  # fmt: skip
    assert res.returncode == 2, res.stderr
    assert "--ray-actors 3 with --concurrency 2" in res.stderr
    assert "--concurrency is the total of conversations in flight, split across the workers" in res.stderr
    assert "give --concurrency 3 or more" in res.stderr
    assert not out.exists()
