"""How the sandbox's runs of a call-site window expression are read back as (what it was given,
what it hands FA4) (``verdicts._normalising_map``): the pairs then judged input against output.

Guards against: a run judged by what it gives alone, so that a helper turning TE's -1 into 0
((0, 0): a band of its own) or a swap of the sides passes as "the band the tree means" -- the
false "safe" of corpus shapes 140, 141, 146 and 147 -- and against the opposite, a side with
no one input (a literal) read as changed.
"""

from __future__ import annotations

from analyzer.sites.behaviour import ExprResult
from analyzer.sites.verdicts import _normalising_map


def runs(*pairs):
    """ExprResult whose runs are (inputs dict, value) pairs."""
    io = tuple((tuple(sorted(ins.items())), value) for ins, value in pairs)
    return ExprResult(True, tuple(dict.fromkeys(v for _, v in pairs)), io=io)


def test_a_side_changed_into_a_number_is_read_against_its_input():
    r = runs(({"l": -1, "r": 0}, (0, 0)), ({"l": 4, "r": 0}, (4, 0)))
    mapped, why = _normalising_map(r, {"l": "bound", "r": "bound"}, True,
                                   "(_z(l), _z(r))")
    assert why == ""
    assert mapped == {((-1, 0), (0, 0), True)}


def test_sides_unpacked_from_one_pair_are_put_back_in_place():
    # ``l, r = ws``; ``(_n(r), _n(l))`` hands FA4 (0, None) for TE's (-1, 0)
    r = runs(({"l": -1, "r": 0}, (0, None)))
    mapped, why = _normalising_map(r, {"l": "bound", "r": "bound"}, True, "(_n(r), _n(l))",
                                   side_of={"l": ("ws", 0), "r": ("ws", 1)})
    assert why == ""
    assert mapped == {((-1, 0), (0, None), True)}


def test_without_their_origin_the_places_stand():
    # parameters ``l``/``r`` (no pair they came from): each read where it is passed
    r = runs(({"l": -1, "r": 0}, (0, None)))
    mapped, _ = _normalising_map(r, {"l": "bound", "r": "bound"}, True, "(_n(r), _n(l))")
    assert mapped == {((0, -1), (0, None), True)}


def test_an_unpacked_side_alone_in_the_other_place_is_unknown():
    r = runs(({"r": 0}, (0, 0)))
    mapped, why = _normalising_map(r, {"r": "bound"}, True, "(_n(r), 0)",
                                   side_of={"r": ("ws", 1)})
    assert mapped == set()
    assert "side 1 of ws" in why


def test_a_helper_called_on_a_literal_is_read_against_the_literal():
    r = runs(({}, (0, 0)))
    assert _normalising_map(r, {}, False, "fix((-1, 0))")[0] == {((-1, 0), (0, 0), False)}
    assert _normalising_map(r, {}, False, "(_z(-1), 0)")[0] == {((-1, 0), (0, 0), False)}


def test_a_literal_side_and_an_unchanged_pair_map_nothing():
    r = runs(({"l": 5}, (5, 0)))
    assert _normalising_map(r, {"l": "bound"}, True, "(l, 0)") == (set(), "")


def test_a_pair_local_given_as_none_is_full_attention():
    r = runs(({"w": None}, (None, None)), ({"w": (-1, 0)}, (None, 0)))
    mapped, why = _normalising_map(r, {"w": "window"}, True, "norm(w)")
    assert why == ""
    assert mapped == {((-1, 0), (None, 0), True)}


def test_split_keys_map_one_side():
    r = runs(({"l": -1}, 0), ({"l": 7}, 7))
    mapped, _ = _normalising_map(r, {"l": "bound"}, True, "0 if l < 0 else l", "left")
    assert mapped == {((-1,), (0,), True)}


def test_a_conditionals_pairs_are_read_place_by_place():
    # ``(0, 0) if l < 0 else (l, 0)``: place 0 reads l in either branch
    r = runs(({"l": -1}, (0, 0)), ({"l": 5}, (5, 0)))
    mapped, why = _normalising_map(r, {"l": "bound"}, True, "(0, 0) if l < 0 else (l, 0)")
    assert why == ""
    assert mapped == {((-1, 0), (0, 0), True)}


def test_a_helper_handed_both_sides_is_read_by_their_pair_or_their_places():
    r = runs(({"l": -1, "r": 0}, (0, None)))
    by_pair, _ = _normalising_map(r, {"l": "bound", "r": "bound"}, True, "norm2(l, r)",
                                  side_of={"l": ("ws", 0), "r": ("ws", 1)})
    assert by_pair == {((-1, 0), (0, None), True)}
    by_place, _ = _normalising_map(r, {"l": "bound", "r": "bound"}, True, "norm2(r, l)")
    assert by_place == {((0, -1), (0, None), True)}


def test_a_pair_built_from_window_values_any_other_way_is_unknown():
    r = runs(({"l": -1}, (0, 0)))
    mapped, why = _normalising_map(r, {"l": "bound"}, True, "make(l)")
    assert mapped == set()
    assert "cannot be read" in why


def test_helpers_applied_one_over_another_are_read_against_the_innermost_literal():
    # ``fix(fix((-1, 0)))``: 'safe' when only a helper called directly on a literal was read
    r = runs(({}, (0, 0)))
    assert _normalising_map(r, {}, False, "fix(fix((-1, 0)))")[0] == {((-1, 0), (0, 0), False)}


def test_a_helper_on_a_literal_that_gives_no_pair_maps_nothing_and_does_not_crash():
    # ``fix((-1, 0))`` returning an int: tuple(value) raised TypeError (an internal error, exit
    # 2 for the whole tree); now no mapping, and the caller reports the non-pair as it does
    # every other one
    r = runs(({}, 7))
    assert _normalising_map(r, {}, False, "fix((-1, 0))") == (set(), "")
    assert _normalising_map(r, {}, False, "(_z(-1), 0)") == (set(), "")
