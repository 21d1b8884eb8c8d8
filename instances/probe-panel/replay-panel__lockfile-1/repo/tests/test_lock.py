import subprocess
import sys


def test_every_line_is_a_pin():
    lines = open("requirements.lock").read().splitlines()[1:]
    assert all("==" in line for line in lines)
