"""Primary probe-panel tasks whose evidence is long command output: two settings dumps that
differ in a few keys, a verbose test run with one failure, a dependency check with one
conflict, and a search with one call site that still passes a removed flag."""

from __future__ import annotations

import random

from panel_fixtures import (
    GITIGNORE,
    Task,
    bash,
    field_spec,
    in_context,
    pyproject,
    read,
    turn,
)

SETTING_NAMES = ["APP_NAME", "HTTP_PORT", "HTTP_WORKERS", "HTTP_KEEPALIVE_SECONDS", "DB_HOST",
                 "DB_PORT", "DB_NAME", "DB_POOL_SIZE", "DB_POOL_TIMEOUT", "QUEUE_URL",
                 "QUEUE_PREFETCH", "MAIL_HOST", "MAIL_PORT", "MAIL_SENDER", "SESSION_COOKIE",
                 "SESSION_DAYS", "CSRF_ENABLED", "SEARCH_URL", "SEARCH_TIMEOUT_MS", "CDN_HOST",
                 "IMAGE_QUALITY", "IMAGE_MAX_EDGE", "UPLOAD_LIMIT_MB", "FEATURE_WISHLIST",
                 "FEATURE_REVIEWS", "FEATURE_GIFT_CARDS", "METRICS_PORT", "TRACE_SAMPLE_RATE",
                 "SENTRY_ENV", "LOG_FORMAT", "TIMEZONE", "CURRENCY", "TAX_ROUNDING",
                 "PAYMENT_PROVIDER", "PAYMENT_TIMEOUT_MS", "RATE_LIMIT_PER_MINUTE",
                 "EXPORT_BUCKET", "BACKUP_HOUR", "SITEMAP_ENABLED", "ROBOTS_POLICY",
                 "CACHE_BACKEND", "CACHE_URL", "CACHE_PREFIX", "CACHE_TTL_SECONDS",
                 "STALE_WHILE_REVALIDATE", "STALE_IF_ERROR_SECONDS", "REGION", "LOG_LEVEL"]


def _settings(rng: random.Random) -> dict[str, str]:
    values = {}
    for name in SETTING_NAMES:
        if name.startswith(("FEATURE_", "CSRF", "SITEMAP")):
            values[name] = rng.choice(["true", "false"])
        elif name.endswith(("PORT", "SIZE", "SECONDS", "MS", "MB", "EDGE", "HOUR", "DAYS")):
            values[name] = str(rng.randint(2, 90) * 10)
        else:
            values[name] = (f"{name.lower().replace('_', '-')}-{rng.randint(1, 9)}"
                            ".internal.example.net")
    values.update({"CACHE_TTL_SECONDS": "300", "STALE_WHILE_REVALIDATE": "true",
                   "REGION": "eu-west-1", "LOG_LEVEL": "info"})
    return values


def _env(values: dict[str, str]) -> str:
    return "".join(f"# {name.lower().replace('_', ' ')}, set per environment\n{name}={value}\n"
                   for name, value in values.items())


@in_context("shopcfg", "Settings of the shop, one file per environment.",
            1404, "tests/test_configs.py")
def configdrift() -> Task:
    staging = _settings(random.Random(1304))
    production = {**staging, "CACHE_TTL_SECONDS": "30", "STALE_WHILE_REVALIDATE": "false",
                  "REGION": "eu-west-3", "LOG_LEVEL": "warn"}
    test = ('from pathlib import Path\n\n\n'
            'def read(name):\n'
            '    lines = Path("configs", name).read_text().splitlines()\n'
            '    return dict(line.split("=", 1) for line in lines if "=" in line)\n\n\n'
            'def test_same_keys():\n'
            '    assert read("staging.env").keys() == read("production.env").keys()\n')
    new_test = test + ('\n\ndef test_production_caches_like_staging():\n'
                       '    staging, production = read("staging.env"), read("production.env")\n'
                       '    for key in ("CACHE_TTL_SECONDS", "STALE_WHILE_REVALIDATE"):\n'
                       '        assert production[key] == staging[key]\n')
    fixed = {**production, "CACHE_TTL_SECONDS": "300", "STALE_WHILE_REVALIDATE": "true"}
    return Task(
        name="configdrift", cohort="primary",
        problem=("Since the last deploy, production serves pages far more slowly than staging "
                 "and its cache hit rate has collapsed. Both environments' settings are in "
                 "configs/. Production must cache the way staging does: find the cache settings "
                 "that differ and fix production's values in configs/production.env."),
        files={".gitignore": GITIGNORE, "pyproject.toml": pyproject("shopcfg", "Settings"),
               "configs/staging.env": _env(staging), "configs/production.env": _env(production),
               "tests/test_configs.py": test},
        fixed={"configs/production.env": _env(fixed)}, tests={"tests/test_configs.py": new_test},
        fail_to_pass=["tests/test_configs.py::test_production_caches_like_staging"],
        pass_to_pass=["tests/test_configs.py::test_same_keys"],
        steps=[turn("Let me see the settings files.", bash("wc -l configs/*.env")),
               turn("Staging first.", bash("cat configs/staging.env")),
               turn("Now production.", bash("cat configs/production.env"))],
        reason="both dumps read, no edit yet; four values differ among 48 keys per file",
        probes=[{"id": "drift", "question": "What do the two settings files say?",
                 "fields": {
                     "ttl_key": field_spec("string", "the name of the cache lifetime setting"),
                     "production_ttl": field_spec("integer", "its value in production"),
                     "staging_ttl": field_spec("integer", "its value in staging"),
                     "production_stale_while_revalidate": field_spec(
                         "boolean", "whether production serves stale while revalidating"),
                     "production_region": field_spec("string", "production's REGION")},
                 "expected": {"ttl_key": "CACHE_TTL_SECONDS", "production_ttl": 30,
                              "staging_ttl": 300, "production_stale_while_revalidate": False,
                              "production_region": "eu-west-3"}}])


UNITS = [("mm", 0.001), ("cm", 0.01), ("dm", 0.1), ("m", 1.0), ("dam", 10.0), ("hm", 100.0),
         ("km", 1000.0), ("in", 0.0254), ("ft", 0.3048), ("yd", 0.9144), ("mi", 1609.344),
         ("nmi", 1852.0), ("ftm", 1.8288), ("ch", 20.1168), ("fur", 201.168), ("lea", 4828.032),
         ("hand", 0.1016), ("link", 0.201168), ("rod", 5.0292), ("pt", 0.000352778),
         ("pc", 0.004233333), ("mil", 0.0000254), ("au", 149597870700.0), ("ly", 9.4607e15),
         ("cable", 185.2), ("span", 0.2286), ("cubit", 0.4572), ("ell", 1.143),
         ("li", 500.0), ("verst", 1066.8), ("shaku", 0.30303), ("ri", 3927.27)]


def _convert(table: list[tuple[str, float]]) -> str:
    rows = "".join(f'    "{unit}": {factor!r},\n' for unit, factor in table)
    return ('"""Lengths: metres per unit."""\n\nMETRES = {\n' + rows + '}\n\n\n'
            'def to_metres(value: float, unit: str) -> float:\n'
            '    """`value` in `unit`, in metres."""\n'
            '    return value * METRES[unit]\n')


@in_context("lengths", "Length conversions for the surveying tools.",
            1405, "tests/test_convert.py")
def pytestlog() -> Task:
    wrong = [(unit, 1825.0 if unit == "nmi" else factor) for unit, factor in UNITS]
    cases = "".join(f"    ({unit!r}, {factor!r}),\n" for unit, factor in UNITS)
    test = ('import pytest\n\nfrom lengths.convert import to_metres\n\nCASES = [\n' + cases +
            ']\n\n\n@pytest.mark.parametrize("unit, metres", CASES)\n'
            'def test_to_metres(unit, metres):\n    assert to_metres(1, unit) == metres\n')
    new_test = test + ('\n\ndef test_nautical_mile_round_trip():\n'
                       '    assert to_metres(2, "nmi") / 2 == 1852.0\n')
    command = ("python -m pytest -v --no-header -p no:cacheprovider tests 2>&1 "
               "| sed -E 's/in [0-9.]+s/in N.NNs/'")
    return Task(
        name="pytestlog", cohort="primary",
        problem=("A length conversion is wrong: lengths.convert.to_metres gives a bad result "
                 "for one unit, and the test suite says which. Find it and fix the table."),
        files={".gitignore": GITIGNORE, "pyproject.toml": pyproject("lengths", "Lengths"),
               "lengths/__init__.py": "", "lengths/convert.py": _convert(wrong),
               "tests/test_convert.py": test},
        fixed={"lengths/convert.py": _convert(UNITS)},
        tests={"tests/test_convert.py": new_test},
        fail_to_pass=["tests/test_convert.py::test_to_metres[nmi-1852.0]",
                      "tests/test_convert.py::test_nautical_mile_round_trip"],
        pass_to_pass=["tests/test_convert.py::test_to_metres[km-1000.0]",
                      "tests/test_convert.py::test_to_metres[mi-1609.344]"],
        steps=[turn("Let me run the test suite verbosely.", bash(command)),
               turn("Now the conversion table.", read("lengths/convert.py"))],
        reason="test run and table read, no edit yet; one FAILED among 32 verbose test lines",
        probes=[{"id": "failure", "question": "What did the test run report?",
                 "fields": {
                     "test_id": field_spec("string", "the full id of the failing test"),
                     "expected": field_spec("number", "the value the test expected"),
                     "actual": field_spec("number", "the value it got"),
                     "passed": field_spec("integer", "how many tests passed")},
                 "expected": {"test_id": "tests/test_convert.py::test_to_metres[nmi-1852.0]",
                              "expected": 1852.0, "actual": 1825.0, "passed": 31}}])


PACKAGES = ["attrs", "boto3", "botocore", "certifi", "cffi", "charset-normalizer", "click",
            "cryptography", "dnspython", "email-validator", "fastapi", "greenlet", "h11",
            "httpcore", "httpx", "idna", "itsdangerous", "jinja2", "jmespath", "markupsafe",
            "orjson", "packaging", "pluggy", "psycopg", "pycparser", "pydantic",
            "pydantic-core", "pyjwt", "python-dateutil", "python-multipart", "pyyaml",
            "redis", "requests", "rich", "s3transfer", "six", "sniffio", "sqlalchemy",
            "starlette", "structlog", "tenacity", "typing-extensions", "tzdata", "ujson",
            "urllib3", "uvicorn", "websockets", "wrapt", "yarl", "zipp"]
CHECKER = '''"""Check requirements.lock against what the pinned packages themselves require."""

import hashlib

REQUIRES = {"urllib3": ("<2", "botocore 1.29.165", "1.26.18")}


def main() -> int:
    pins = [line.split("==") for line in open("requirements.lock") if "==" in line]
    conflicts = 0
    for name, version in ((n.strip(), v.strip()) for n, v in pins):
        rule = REQUIRES.get(name)
        if rule and int(version.split(".")[0]) >= int(rule[0][1:]):
            print(f"CONFLICT {name}=={version}: {rule[1]} requires {name}{rule[0]} "
                  f"(newest allowed on the mirror: {rule[2]})")
            conflicts += 1
        else:
            digest = hashlib.sha256(f"{name}=={version}".encode()).hexdigest()[:16]
            print(f"ok       {name:<22}{version:<10}sha256:{digest}")
    print(f"{len(pins)} pins checked, {conflicts} conflict(s)")
    return 1 if conflicts else 0


if __name__ == "__main__":
    raise SystemExit(main())
'''


def _lock(urllib3: str) -> str:
    rng = random.Random(1306)
    pins = {name: f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}"
            for name in PACKAGES}
    pins["botocore"], pins["urllib3"] = "1.29.165", urllib3
    return "# generated by pip-compile\n" + "".join(f"{n}=={v}\n" for n, v in pins.items())


@in_context("shop", "The shop's web application and its pinned dependencies.",
            1406, "tests/test_lock.py")
def lockfile() -> Task:
    test = ('import subprocess\nimport sys\n\n\n'
            'def test_every_line_is_a_pin():\n'
            '    lines = open("requirements.lock").read().splitlines()[1:]\n'
            '    assert all("==" in line for line in lines)\n')
    new_test = test + ('\n\ndef test_the_lock_has_no_conflict():\n'
                       '    done = subprocess.run([sys.executable, "tools/check_pins.py"])\n'
                       '    assert done.returncode == 0\n'
                       '    assert "urllib3==1.26.18" in open("requirements.lock").read()\n')
    return Task(
        name="lockfile", cohort="primary",
        problem=("`pip install -r requirements.lock` fails in CI with a resolver conflict. "
                 "tools/check_pins.py checks the lock against what the pinned packages require. "
                 "Fix the conflicting pin in requirements.lock, using the newest version allowed."),
        files={".gitignore": GITIGNORE, "pyproject.toml": pyproject("shop", "A shop"),
               "requirements.lock": _lock("2.2.1"), "tools/check_pins.py": CHECKER,
               "tests/test_lock.py": test},
        fixed={"requirements.lock": _lock("1.26.18")}, tests={"tests/test_lock.py": new_test},
        fail_to_pass=["tests/test_lock.py::test_the_lock_has_no_conflict"],
        pass_to_pass=["tests/test_lock.py::test_every_line_is_a_pin"],
        steps=[turn("Let me read the lock file.", bash("cat requirements.lock")),
               turn("Now run the checker.", bash("python tools/check_pins.py"))],
        reason="lock read and checker run, no edit yet; one CONFLICT line among 50 ok lines",
        probes=[{"id": "conflict", "question": "What did the pin check find?",
                 "fields": {
                     "package": field_spec("string", "the package whose pin conflicts"),
                     "pinned": field_spec("string", "the version the lock pins"),
                     "required": field_spec("string", "the version range that is required"),
                     "required_by": field_spec("string", "the package and version requiring "
                                               "it, as the checker writes it"),
                     "newest_allowed": field_spec("string", "the newest version allowed"),
                     "pins_checked": field_spec("integer", "how many pins were checked")},
                 "expected": {"package": "urllib3", "pinned": "2.2.1", "required": "<2",
                              "required_by": "botocore 1.29.165", "newest_allowed": "1.26.18",
                              "pins_checked": 50}}])


def _module(rng: random.Random, count: int, legacy: int | None) -> str:
    lines = ['"""Ledger jobs."""', "", "from ledger.db import open_session", ""]
    for index in range(count):
        lines += ["", f"def job_{rng.randint(100, 999)}_{index}(db):"]
        if index == legacy:
            lines.append("    report_session = open_session(db, legacy_auth=True)")
            lines.append("    return report_session.run('SELECT 1')")
        else:
            lines.append(f"    session = open_session(db, timeout={rng.randint(2, 30)})")
            lines.append("    return session.run('SELECT 1')")
    return "\n".join(lines) + "\n"


DB = '''"""Sessions on the ledger database."""


class Session:
    def __init__(self, db, timeout=10):
        self.db, self.timeout = db, timeout

    def run(self, sql):
        return (self.db, sql)


def open_session(db, timeout=10, **removed):
    """A session. Deprecated and now refused: legacy_auth (removed in 3.0)."""
    if removed:
        raise TypeError(f"unexpected arguments: {sorted(removed)}")
    return Session(db, timeout)
'''
MODULES = ["accounts", "audit", "billing", "budgets", "invoices", "journal", "payroll",
           "reports/monthly", "reports/yearly", "taxes"]


def _ledger() -> tuple[dict[str, str], int]:
    """The ledger package, and the line of the call that still passes legacy_auth."""
    rng = random.Random(1307)
    files = {"ledger/__init__.py": "", "ledger/db.py": DB}
    for name in MODULES:
        legacy = 3 if name == "reports/yearly" else None
        files[f"ledger/{name}.py"] = _module(rng, 6, legacy)
    files["ledger/reports/__init__.py"] = ""
    text = files["ledger/reports/yearly.py"].splitlines()
    line = next(i for i, row in enumerate(text, start=1) if "legacy_auth" in row)
    return files, line


@in_context("ledger", "Nightly jobs that keep the ledger database in shape.",
            1407, "tests/test_jobs.py")
def grepsites() -> Task:
    files, line = _ledger()
    test = ('from ledger.db import open_session\n\n\n'
            'def test_open_session_defaults():\n'
            '    assert open_session("db").timeout == 10\n')
    new_test = test + ('\n\ndef test_every_job_runs():\n'
                       '    import importlib\n    import pkgutil\n\n    import ledger\n\n'
                       '    names = [m.name for m in pkgutil.walk_packages(ledger.__path__, '
                       '"ledger.")]\n'
                       '    for name in names:\n'
                       '        module = importlib.import_module(name)\n'
                       '        for attribute in dir(module):\n'
                       '            if attribute.startswith("job_"):\n'
                       '                assert getattr(module, attribute)("db")[1] == '
                       '"SELECT 1"\n')
    yearly = files["ledger/reports/yearly.py"]
    return Task(
        name="grepsites", cohort="primary",
        problem=("open_session() no longer accepts the legacy authentication flag (see "
                 "ledger/db.py), and one nightly job now fails with a TypeError. Find every "
                 "call that still passes it and drop the argument."),
        files={".gitignore": GITIGNORE, "pyproject.toml": pyproject("ledger", "Ledger jobs"),
               **files, "tests/test_jobs.py": test},
        fixed={"ledger/reports/yearly.py": yearly.replace("open_session(db, legacy_auth=True)",
                                                          "open_session(db)")},
        tests={"tests/test_jobs.py": new_test},
        fail_to_pass=["tests/test_jobs.py::test_every_job_runs"],
        pass_to_pass=["tests/test_jobs.py::test_open_session_defaults"],
        steps=[turn("Let me find every call of open_session.",
                    bash("grep -n 'open_session(' $(find ledger -name '*.py' | sort)")),
               turn("And the session module.", read("ledger/db.py"))],
        reason="calls listed and the session module read, no edit yet; one of 61 grep lines "
               "holds the call to fix",
        probes=[{"id": "legacy-call", "question": "Where is the call that still passes the "
                 "removed flag?",
                 "fields": {
                     "file": field_spec("string", "the file, as grep printed it"),
                     "line": field_spec("integer", "its line number"),
                     "variable": field_spec("string", "the variable the call's result is "
                                            "assigned to")},
                 "expected": {"file": "ledger/reports/yearly.py", "line": line,
                              "variable": "report_session"}}])
