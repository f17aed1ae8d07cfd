"""Languages are plugins with resource files; users extend them with their own words, no code."""

import pytest

from usersim import lang
from usersim.cases.loader import load_cases_partial
from usersim.lang.resources import Language, ResourceError, languages, remove_resource_dir, resource_dirs


@pytest.fixture
def fresh():
    """Resources re-read for the test and restored after it (the cache is process-wide)."""
    before = list(resource_dirs())
    lang.resources.cache_clear()
    yield
    for d in resource_dirs():
        if d not in before:
            remove_resource_dir(d)
    lang.resources.cache_clear()


def test_builtin_languages_come_from_the_entry_points():
    assert {"zh", "en"} <= set(lang.language_codes())
    assert isinstance(languages.get("zh"), Language)
    assert languages.get("zh").data_dir.is_dir()
    with pytest.raises(KeyError, match="Unknown language 'zhh'. Did you mean 'zh'"):
        lang.resources("zhh")


@pytest.mark.parametrize(
    "text, code",
    [
        ("请问您几位出行？", "zh"),
        ("Shall I block the card ending 4821?", "en"),
        ("我想订 Hilton Tokyo Bay 的房间", "zh"),
        ("Book the 华为 MateBook for me please, thanks a lot", "en"),
        ("", "en"),
        ("1234 5678", "en"),
    ],
)
def test_detect_reads_the_script(text, code):
    assert lang.detect(text) == code


def test_user_folder_extends_lists_and_keeps_builtin_entries(tmp_path, monkeypatch, fresh):
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "mytopic.yaml").write_text("concepts:\n  plan_change: [switch plans, move me to]\n")
    monkeypatch.setenv("USERSIM_LANG_PATH", str(tmp_path))
    lang.resources.cache_clear()
    res = lang.resources("en")
    assert res.get("mytopic", "concepts")["plan_change"][:2] == ["switch plans", "move me to"]
    assert str(tmp_path / "en" / "mytopic.yaml") in res.files["mytopic"]


def test_merge_extends_lists_merges_maps_and_drops_duplicates(tmp_path, fresh):
    a, b = tmp_path / "a", tmp_path / "b"
    for d, text in ((a, "cues: [x, y]\nmap: {k: [1]}\n"), (b, "cues: [y, z]\nmap: {k: [2], j: [3]}\n")):
        (d / "en").mkdir(parents=True)
        (d / "en" / "t.yaml").write_text(text)
    lang.resources.cache_clear()
    lang.resources  # noqa: B018
    from usersim.lang.resources import add_resource_dir

    add_resource_dir(a)
    add_resource_dir(b)
    res = lang.resources("en")
    assert res.words("t", "cues") == ("x", "y", "z")
    assert res.get("t", "map") == {"k": [1, 2], "j": [3]}


def test_a_broken_resource_file_is_named(tmp_path, fresh):
    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / "acts.yaml").write_text("- not a mapping\n")
    from usersim.lang.resources import add_resource_dir

    add_resource_dir(tmp_path)
    with pytest.raises(ResourceError, match=r"zh/acts.yaml: a language resource file is a mapping"):
        lang.resources("zh")


def test_a_domain_folder_lang_folder_is_loaded_and_checked(tmp_path, fresh):
    (tmp_path / "lang" / "en").mkdir(parents=True)
    (tmp_path / "lang" / "en" / "mytopic.yaml").write_text("concepts:\n  roaming: [data abroad]\n")
    (tmp_path / "lang" / "english").mkdir()
    cases, problems = load_cases_partial([tmp_path])
    assert cases == []
    assert [(p.field, p.message) for p in problems] == [
        ("", "unknown language folder 'english'. Languages: en, zh")
    ]
    assert lang.resources("en").get("mytopic", "concepts")["roaming"][-1] == "data abroad"


def test_a_languages_own_files_are_read_when_their_topic_is_first_asked_for(tmp_path, fresh, monkeypatch):
    """A language's own resource files are read topic by topic (a run's first request needs the
    weekday names only); a broken one is still named, when its topic is asked for; an extension
    folder's files are all read (and a broken one named) at once."""
    data = tmp_path / "xx"
    data.mkdir()
    (data / "dates.yaml").write_text("weekday_names: [Mo, Tu, We, Th, Fr, Sa, Su]\n", encoding="utf-8")
    (data / "acts.yaml").write_text("- not a mapping\n", encoding="utf-8")
    monkeypatch.setitem(languages._items, "xx", Language("xx", "Test", data))
    res = lang.resources("xx")
    assert res.words("dates", "weekday_names")[0] == "Mo"
    assert sorted(res.files) == ["acts", "dates"]
    with pytest.raises(ResourceError, match=r"xx/acts.yaml: a language resource file is a mapping"):
        res.topic("acts")
    ext = tmp_path / "ext"
    (ext / "xx").mkdir(parents=True)
    (ext / "xx" / "dates.yaml").write_text("weekday_names: [Lu]\nmonths: [Jan]\n", encoding="utf-8")
    (ext / "xx" / "other.yaml").write_text("[broken\n", encoding="utf-8")
    from usersim.lang.resources import add_resource_dir

    add_resource_dir(ext)
    with pytest.raises(ResourceError, match=r"ext/xx/other.yaml: cannot read language resource"):
        lang.resources("xx")
    (ext / "xx" / "other.yaml").write_text("k: [v]\n", encoding="utf-8")
    lang.resources.cache_clear()
    res = lang.resources("xx")
    assert res.words("dates", "weekday_names") == ("Mo", "Tu", "We", "Th", "Fr", "Sa", "Su", "Lu")
    assert res.words("dates", "months") == ("Jan",)  # built-in first, the extension merged after
