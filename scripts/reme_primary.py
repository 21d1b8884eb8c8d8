"""The panel's four primary candidates: payment, checkout_504, server_error, build_token.

server_error regenerates the readtool fixture's 150,000-line server log with the fixture's own
seed and draw order (so its lines are the upstream bytes) and keeps a source view of it;
build_token runs the A/B eval's noisy_build.py and keeps a source view of its 4,001-line
output. payment and checkout_504 have no public source: their snapshots are rebuilt here so that
every expected fact is evidence in them (marked `rebuilt` in provenance.json).
"""

from __future__ import annotations

import random
import subprocess
import sys

from reme_panel import ABEVAL, READTOOL, ReMeTask, Source, read, reads, reme_task, source_view

PRIMARY = "Primary candidate"
HEX = "0123456789abcdef"
WORDS = ["function", "return", "var", "const", "let", "typeof", "void 0", "Object.assign",
         "Promise.resolve", "Array.isArray"]
BUNDLE_HEAD = ('(()=>{"use strict";function retryDelay(t){return Math.floor(Math.random()*'
               'Math.min(3e4,250*Math.pow(2,t)))}')
ERROR_LINE = ("2026-08-08T23:41:17Z ERROR http request failed request_id=req-7f3d9 status=502 "
              "upstream=payments err=connect ECONNREFUSED 10.0.4.17:8443")


def server_log_lines() -> list[str]:
    """The readtool workspace's logs/server.log: one random stream (seed 20260809) feeds the
    lockfile, the minified bundle and then the log, so the earlier draws are replayed first."""
    rng = random.Random(20260809)
    for _ in range(8000):  # package-lock.json
        rng.choices(HEX, k=64)
        rng.randint(0, 9), rng.randint(0, 20), rng.randint(0, 40)
    size = len(BUNDLE_HEAD)  # src/app.min.js
    while size < 600_000:
        a, b = rng.choice("abcdefghijklmnopqrstuvwxyz"), rng.randint(0, 99999)
        size += len(f"function {a}{b}(e,n){{return {rng.choice(WORDS)}===e?n:{a}{b}}}")
    total, error_at, lines = 150_000, 150_000 - 300, []
    for i in range(total):
        if i == error_at:
            lines.append(ERROR_LINE)
            continue
        rid = "".join(rng.choices(HEX, k=5))
        lines.append(f"2026-08-08T2{i % 4}:{i % 60:02d}:{(i * 7) % 60:02d}Z INFO http request "
                     f"ok request_id=req-{rid} status=200 dur_ms={rng.randint(2, 90)}")
    return lines


def server_error() -> ReMeTask:
    view = source_view("logs/server.log", server_log_lines(), r"\bERROR\b", 15, 5)
    return reme_task(
        "server_error", PRIMARY,
        "Locate the unique ERROR in the server log and retain its exact request, timestamp, "
        "upstream and connection failure.",
        {"logs/server.log.view": view},
        [reads("Let me read the server log's view.", read("logs/server.log.view"))],
        {"request_id": ("string", "the failed request's id"),
         "timestamp": ("string", "its timestamp, as logged"),
         "status": ("integer", "its HTTP status"),
         "upstream": ("string", "the upstream it called"),
         "error": ("string", "the connection error code"),
         "address": ("string", "the address it could not connect to (host:port)")},
        {"request_id": "req-7f3d9", "timestamp": "2026-08-08T23:41:17Z", "status": 502,
         "upstream": "payments", "error": "ECONNREFUSED", "address": "10.0.4.17:8443"},
        Source("readtool: log-tail error (LOG_ERROR_REQ_ID, LOG_ERROR_TS)", READTOOL,
               "logs/server.log regenerated with the fixture's seed and draw order (150,000 "
               "lines, the ERROR at line 149,701); kept as a source view"))


NOISY_BUILD = ("for i in range(4000):\n    print(f'[build] step {i} ' + 'x' * 60)\n"
               "    if i == 2000:\n        print('UNIQUE_TOKEN=tok_9f31c_middle')\n")


def build_output() -> list[str]:
    """noisy_build.py's output, by running it."""
    done = subprocess.run([sys.executable, "-c", NOISY_BUILD], capture_output=True, text=True,
                          check=True)
    return done.stdout.splitlines()


def build_token() -> ReMeTask:
    view = source_view("the output of python3 ./noisy_build.py", build_output(),
                       "^UNIQUE_TOKEN=", 20, 5)
    return reme_task(
        "build_token", PRIMARY,
        "Run python3 ./noisy_build.py (it prints a lot). Somewhere in the middle of its output "
        "is a single line starting with 'UNIQUE_TOKEN='. Reply with the full token value.",
        {"noisy_build.py": NOISY_BUILD, "noisy_build.output.view": view},
        [reads("Let me read the build script.", read("noisy_build.py")),
         reads("And the view of its output.", read("noisy_build.output.view"))],
        {"token": ("string", "the full token value"),
         "step": ("integer", "the build step printed just before the token line"),
         "total_steps": ("integer", "how many build steps the script runs"),
         "prefix": ("string", "the prefix of the token line")},
        {"token": "tok_9f31c_middle", "step": 2000, "total_steps": 4000,
         "prefix": "UNIQUE_TOKEN="},
        Source("err_big_output", ABEVAL, "read-only: the script's real output is kept as a "
               "source view (4,001 lines) instead of the agent running it"))


def payment_files() -> dict[str, str]:
    """The rebuilt payment incident: report, retry code, regression tests, gateway log."""
    rng = random.Random(4827)
    log = [f"2026-07-14T09:{i:02d}:{rng.randint(0, 59):02d}Z charge ok invoice=INV-{600 + i} "
           f"charge=CH-{900 + i} key=pay-{HEX[i % 16]}{i} amount_minor={rng.randint(5, 400)}00"
           for i in range(30)]
    log[20:20] = [
        "2026-07-14T09:41:02Z attempt=1 invoice=INV-731 key=pay-a status=timeout "
        "provider_state=committed first_attempt_committed=true",
        "2026-07-14T09:41:35Z attempt=2 invoice=INV-731 key=pay-b status=200 charge=CH-991 "
        "amount_minor=12900 (second charge: new idempotency key)"]
    retry = ("import uuid\n\n\ndef charge_with_retry(client, invoice, amount_minor):\n"
             "    key = f'pay-{uuid.uuid4().hex[:8]}'  # BUG: a new key on every attempt\n"
             "    for attempt in range(1, MAX_ATTEMPTS + 1):\n"
             "        response = client.charge(invoice, amount_minor, idempotency_key=key)\n"
             "        if response.status in NO_RETRY_HTTP_STATUSES:\n"
             "            return response\n"
             "        if response.ok:\n            return response\n"
             "    return response\n\n\nMAX_ATTEMPTS = 3\nNO_RETRY_HTTP_STATUSES = (402, 422)\n")
    tests = ("def test_timeout_then_success(fake):\n    fake.script(['timeout', 200])\n"
             "    charge_with_retry(fake, 'INV-1', 100)\n    assert fake.attempts == 2\n\n\n"
             "def test_validation_422(fake):\n    fake.script([422])\n"
             "    charge_with_retry(fake, 'INV-1', 100)\n    assert fake.attempts == 1\n\n\n"
             "def test_three_timeouts(fake):\n    fake.script(['timeout'] * 3)\n"
             "    charge_with_retry(fake, 'INV-1', 100)\n    assert fake.attempts == 3\n")
    report = ("# Incident PAY-4827: duplicate charge on retry\n\nInvoice INV-731 was charged "
              "twice. The first attempt timed out at the client, but the provider had already "
              "committed it; the retry sent a different idempotency key, so the provider "
              "charged again. The charge the customer keeps is CH-991; the duplicate is "
              "refunded.\n")
    return {"incidents/duplicate-charge.md": report, "payments/retry.py": retry,
            "payments/test_retry_regression.py": tests,
            "logs/gateway.log": "\n".join(log) + "\n"}


FOLLOW_UP_PAYMENT = ("Answer the initial task's follow-up from the investigation above: report "
                     "the facts it established, exactly as the sources show them. Give "
                     "regression_attempt_counts as the named JSON mapping (test name to count).")


def payment() -> ReMeTask:
    return reme_task(
        "payment", PRIMARY, "Investigate the original payment retry incident.",
        payment_files(),
        [reads("Let me read the incident report.", read("incidents/duplicate-charge.md")),
         reads("Now the gateway log.", read("logs/gateway.log")),
         reads("The retry code.", read("payments/retry.py")),
         reads("And its regression tests.", read("payments/test_retry_regression.py"))],
        {"incident_id": ("string", "the incident's id"),
         "invoice_id": ("string", "the invoice charged twice"),
         "successful_charge_id": ("string", "the charge that succeeded"),
         "amount_minor": ("integer", "its amount in minor units"),
         "attempt_keys": ("array", "the idempotency keys of the attempts, in order"),
         "first_attempt_committed": ("boolean", "whether the first attempt was committed"),
         "max_attempts": ("integer", "the retry code's maximum number of attempts"),
         "no_retry_http_statuses": ("array", "the HTTP statuses never retried"),
         "key_generation_line": ("integer", "the line of the retry code that makes the key"),
         "regression_attempt_counts": ("object", "a JSON mapping from each regression test's "
                                       "name without its test_ prefix to the attempt count it "
                                       "asserts (a mapping, not an array)")},
        {"incident_id": "PAY-4827", "invoice_id": "INV-731", "successful_charge_id": "CH-991",
         "amount_minor": 12900, "attempt_keys": ["pay-a", "pay-b"],
         "first_attempt_committed": True, "max_attempts": 3, "no_retry_http_statuses": [402, 422],
         "key_generation_line": 5, "regression_attempt_counts": {
             "timeout_then_success": 2, "validation_422": 1, "three_timeouts": 3}},
        Source("payment", None, "no public source (the study's own earlier trajectory): the "
               "snapshot is rebuilt here so that every expected fact is evidence in it"),
        question=FOLLOW_UP_PAYMENT)


def checkout_files() -> dict[str, str]:
    """The rebuilt checkout 504 incident: deploy timeline, migrations, gateway errors."""
    rng = random.Random(504)
    timeline = (
        "2026-09-03T14:00:12Z deploy checkout-api v2.30.3 (runs migration 0042)\n"
        "2026-09-03T14:06:40Z alert: checkout 504 error rate 8% (threshold 1%)\n"
        "2026-09-03T14:11:05Z rollback: checkout-api rolled back to v2.30.2\n"
        "2026-09-03T14:19:30Z after rollback: 504 rate 7%; rollback_fixed=false (the index "
        "build keeps its lock)\n"
        "2026-09-03T14:52:10Z root cause: CREATE INDEX without CONCURRENTLY in migration 0042 "
        "locks orders for writes\n"
        "2026-09-03T15:02:44Z deploy checkout-api v2.31.0 (migration 0043: the database fix)\n"
        "2026-09-03T15:10:02Z 504 rate 0%\n")
    migration_42 = "CREATE INDEX idx_orders_customer ON orders (customer_id);\n"
    migration_43 = ("SET statement_timeout = '45s';\nDROP INDEX IF EXISTS idx_orders_customer;\n"
                    "CREATE INDEX CONCURRENTLY idx_orders_customer ON orders (customer_id);\n")
    gateway = [f'10.2.{rng.randint(0, 9)}.{rng.randint(2, 250)} - - [03/Sep/2026:14:{i + 7:02d}:'
               f'{rng.randint(0, 59):02d} +0000] "POST /api/checkout HTTP/1.1" 504 167 '
               f'upstream=checkout-api:8080 upstream_response_time=30.0{rng.randint(0, 9)}'
               for i in range(22)]
    return {"ops/timeline.log": timeline, "db/migrations/0042_orders_customer_idx.sql":
            migration_42, "db/migrations/0043_fix_orders_index.sql": migration_43,
            "logs/gateway-504.log": "\n".join(gateway) + "\n"}


def checkout_504() -> ReMeTask:
    return reme_task(
        "checkout_504", PRIMARY, "Investigate the checkout 504 incident: distinguish the failed "
        "rollback, root cause and final database fix.", checkout_files(),
        [reads("Let me read the gateway's 504s.", read("logs/gateway-504.log")),
         reads("Now the ops timeline.", read("ops/timeline.log")),
         reads("The migration deployed first.", read("db/migrations/0042_orders_customer_idx.sql")),
         reads("And the later one.", read("db/migrations/0043_fix_orders_index.sql"))],
        {"setting": ("string", "the database setting the final fix sets"),
         "value_seconds": ("integer", "its value in seconds"),
         "index_mode": ("string", "how the final fix builds the index"),
         "root_cause": ("string", "the root cause"),
         "rolled_back_version": ("string", "the version rolled back to"),
         "rollback_fixed": ("boolean", "whether the rollback fixed the 504s"),
         "deployed_version": ("string", "the version that deployed the final fix"),
         "initial_error_percent": ("integer", "the first alert's 504 error rate, in percent")},
        {"setting": "statement_timeout", "value_seconds": 45, "index_mode": "CONCURRENTLY",
         "root_cause": "CREATE INDEX without CONCURRENTLY", "rolled_back_version": "v2.30.2",
         "rollback_fixed": False, "deployed_version": "v2.31.0", "initial_error_percent": 8},
        Source("checkout_504", None, "no public source: the snapshot is rebuilt here from the "
               "study's description so that every expected fact is evidence in it"))


PRIMARY_TASKS = [payment, checkout_504, server_error, build_token]
