"""vit.bounded.BoundedDict: the one LRU of the package (issue 19)."""

from __future__ import annotations

import pytest

from vit.bounded import BoundedDict


def test_the_least_recently_used_go_first():
    d = BoundedDict(3)
    for k in "abc":
        d[k] = k
    assert d.get("a") == "a"  # a is now the most recent
    d["d"] = "d"
    assert list(d) == ["c", "a", "d"]  # b, the least recently used, went
    d["c"] = "C"  # a write counts as a use
    d["e"] = "e"
    assert set(d) == {"c", "d", "e"}
    assert d.get("missing", 7) == 7


def test_a_size_bound_keeps_the_newest_even_alone():
    d = BoundedDict(10, max_size=5, size=len)
    d["x"] = "aaa"
    d["y"] = "bbb"  # 6 > 5: x goes
    assert list(d) == ["y"]
    d["z"] = "cccccccc"  # alone over the bound: kept (the caller checks a single entry first)
    assert list(d) == ["z"] and d.total_size() == 8


def test_entries_in_use_are_never_evicted():
    d = BoundedDict(2, keep=lambda key, value: key == "pinned")
    d["pinned"] = 1
    d["a"] = 2
    d["b"] = 3
    assert set(d) == {"pinned", "b"}
    assert [k for k, _ in d.evict()] == []


@pytest.mark.parametrize("kwargs,words", [({"max_items": 0}, "max_items"), ({"max_items": 2, "max_size": 3}, "size=")])
def test_bad_bounds_are_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        BoundedDict(**kwargs)


def test_it_pickles_with_its_bounds():
    """An Analysis holds one (its variants) and crosses processes on ZeroGPU."""
    import pickle

    d = BoundedDict(2)
    d["a"], d["b"] = 1, 2
    e = pickle.loads(pickle.dumps(d))
    assert list(e.items()) == [("a", 1), ("b", 2)] and e.max_items == 2
    e["c"] = 3
    assert list(e) == ["b", "c"]
