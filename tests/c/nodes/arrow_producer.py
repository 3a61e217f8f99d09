"""Sends each case of arrow_cases, with its name and its text as Arrow C++ prints it."""

from arrow_cases import cases
from nerve import Node

node = Node()
for name, array in cases():
    node.send_output("data", array, {"case": name, "expected": array.to_string()})
