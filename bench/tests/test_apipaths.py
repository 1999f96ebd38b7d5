"""The bench's one copy of relinkd's path rule says what docs/api and RelinkAPI say."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from relinkbench.apipaths import central_path, escape, peripheral_path  # noqa: E402


def test_identifiers_escape_as_the_api_says():
    assert central_path("bench") == "/org/relink/central/bench"
    assert central_path("front-door 1") == "/org/relink/central/front_2ddoor_201"
    assert central_path("é") == "/org/relink/central/_c3_a9"
    assert escape("a-b.c_d:é") == "a_2db_2ec_5fd_3a_c3_a9"  # as Tests/RelinkAPITests/PathTests.swift


def test_peripherals_use_the_lowercase_uuid():
    assert peripheral_path("6B1F2C3D-0000-4ABC-8DEF-0123456789AB") == "/org/relink/peripheral/6b1f2c3d_0000_4abc_8def_0123456789ab"
