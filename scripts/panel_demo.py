"""Probes for the demo suite's hand-written histories: facts their tool outputs established."""

from __future__ import annotations

from typing import Any

from panel_fixtures import field_spec

DEMO_PROBES: dict[str, list[dict[str, Any]]] = {
    "replay-demo__tally-1": [{
        "id": "currency-table", "question": "What did the exploration of tally show?",
        "fields": {
            "table": field_spec("string", "the name of the mapping from withdrawn codes to "
                                "their successors in tally/currencies.py"),
            "resolver_line": field_spec("integer", "the line of tally/currencies.py defining "
                                        "the function that resolves withdrawn codes"),
            "vef_successor": field_spec("string", "the code that replaced VEF"),
            "module_lines": field_spec("integer", "how many lines tally/currencies.py has"),
            "baseline_passed": field_spec("integer", "how many tests passed in the baseline "
                                          "run")},
        "expected": {"table": "REPLACED_BY", "resolver_line": 203, "vef_successor": "VES",
                     "module_lines": 311, "baseline_passed": 12}}],
    "replay-demo__iniconf-1": [{
        "id": "interpolation", "question": "What did the check run of the README example show?",
        "fields": {
            "reference": field_spec("string", "the option name the failing reference uses, as "
                                    "written"),
            "stored_options": field_spec("array", "the option names the error lists as "
                                         "stored in that section", order_free=True),
            "pidfile": field_spec("string", "the value the check printed for pidfile"),
            "baseline_passed": field_spec("integer", "how many tests passed in the baseline "
                                          "run")},
        "expected": {"reference": "Log-Dir",
                     "stored_options": ["base", "cache_dir", "data_dir", "environment", "home",
                                        "log_dir"],
                     "pidfile": "/var/lib/orders/orders.pid", "baseline_passed": 16}}],
    "replay-demo__stockroom-1": [{
        "id": "raw-lookups", "question": "What did the reproduction and the search show?",
        "fields": {
            "raw_lookup_lines": field_spec("array", "the lines of stockroom/inventory.py that "
                                           "index UNITS directly, in order"),
            "level_after_kg": field_spec("number", "the stock level the second run printed "
                                         "after adding 1 KG"),
            "failing_line": field_spec("integer", "the line of reproduce.py where the second "
                                       "run failed")},
        "expected": {"raw_lookup_lines": [47, 48, 62, 63], "level_after_kg": 1.5,
                     "failing_line": 10}}],
}
