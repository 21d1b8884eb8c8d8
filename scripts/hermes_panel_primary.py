"""The panel's primary tasks: each fact inside one tool output of at least 2,000 characters.

server_error and build_token keep the planted facts of their Hermes fixtures with the noise
scaled down (the upstream log has 150,000 lines, the build prints 4,000); payment and
checkout_504 have no public source and are rebuilt from the study's description.
"""

from __future__ import annotations

import random

from hermes_panel_base import (
    ABEVAL,
    READTOOL,
    PanelTask,
    Read,
    Source,
    fact_task,
    planted_lines,
    read_task,
)
from panel_fixtures import bash, hex_id, turn

ERROR_LINE = ("2026-08-08T23:41:17Z ERROR http request failed request_id=req-7f3d9 status=502 "
              "upstream=payments err=connect ECONNREFUSED 10.0.4.17:8443")


def server_log(rng: random.Random, total: int = 90, error_at: int = 60) -> str:
    """INFO noise with the one ERROR line of the readtool fixture near the tail."""
    return planted_lines(total, error_at, ERROR_LINE, lambda i: (
        f"2026-08-08T2{i % 4}:{i % 60:02d}:{(i * 7) % 60:02d}Z INFO http request ok "
        f"request_id=req-{hex_id(rng, 5)} status=200 dur_ms={rng.randint(2, 90)}"))


def server_error() -> PanelTask:
    rng = random.Random(20260809)
    return read_task(
        "server_error", "primary",
        "Requests are failing intermittently; the server log in logs/ holds the failure. Find "
        "the one failed request.",
        Read("logs/server.log", server_log(rng), "Let me look at the end of the server log.",
             "tail -n 60 logs/server.log"),
        {"request_id": ("string", "the failed request's id"),
         "timestamp": ("string", "when it failed, as the log writes it"),
         "status": ("integer", "its HTTP status"),
         "upstream": ("string", "the upstream it went to"),
         "address": ("string", "the address whose connection was refused (host:port)")},
        {"request_id": "req-7f3d9", "timestamp": "2026-08-08T23:41:17Z", "status": 502,
         "upstream": "payments", "address": "10.0.4.17:8443"},
        Source("readtool: log-tail error (LOG_ERROR_REQ_ID, LOG_ERROR_TS)", READTOOL,
               "150,000 log lines scaled to 90; the ERROR line is the fixture's",
               {"request_id": "LOG_ERROR_REQ_ID", "timestamp": "LOG_ERROR_TS"}))


NOISY_BUILD = ("for i in range(80):\n    print(f'[build] step {i} ' + 'x' * 60)\n"
               "    if i == 40:\n        print('UNIQUE_TOKEN=tok_9f31c_middle')\n")


def build_token() -> PanelTask:
    return read_task(
        "build_token", "primary",
        "The build script noisy_build.py prints one token line among its steps; find it and "
        "the step it follows.",
        Read("noisy_build.py", NOISY_BUILD, "Let me run the build.", "python3 noisy_build.py"),
        {"token": ("string", "the full token value printed"),
         "after_step": ("integer", "the step number printed just before it"),
         "last_step": ("integer", "the number of the last step printed")},
        {"token": "tok_9f31c_middle", "after_step": 40, "last_step": 79},
        Source("err_big_output (UNIQUE_TOKEN=...)", ABEVAL,
               "4,000 build steps scaled to 80; token at the middle step as upstream",
               {"token": "err_big_output's success check"}))


REGIONS = ["us", "ca", "mx", "br", "ar", "cl", "eu", "de", "fr", "es", "it", "nl", "be", "pl",
           "se", "no", "dk", "fi", "ie", "pt", "at", "ch", "cz", "gr", "ro", "hu", "tr", "za",
           "ng", "ke", "eg", "ae", "sa", "in", "sg", "my", "th", "id", "ph", "vn", "jp", "kr",
           "au", "nz", "apac"]


def providers(rng: random.Random) -> str:
    """The routing table: one provider account per merchant region, uk among them."""
    lines = ["# Payment provider routing: merchant region -> provider account", "routes:"]
    for index, region in enumerate(REGIONS):
        if index == 27:
            lines.append("  uk: {provider: stripe, account: acct_1UKq7Rt5}")
        provider = rng.choice(["adyen", "stripe", "checkout"])
        account = (f"acct_1{hex_id(rng, 7)}" if provider == "stripe"
                   else f"{provider[:3].upper()}-{region.upper()}-{rng.randint(1000, 9999)}")
        lines.append(f"  {region}: {{provider: {provider}, account: {account}}}")
    return "\n".join(lines) + "\n"


def payment_log(rng: random.Random) -> str:
    """Charge attempts, one declined by the provider for one region."""
    lines = []
    for i in range(70):
        region = rng.choice(["us", "eu", "apac"])
        if i == 47:
            lines.append("2026-07-14T09:12:44Z WARN charge declined order=ord_58213 region=uk "
                         "amount=249.90 currency=GBP decline_code=insufficient_scope "
                         "provider_request=req_Kp41zX")
            continue
        lines.append(f"2026-07-14T09:{i % 60:02d}:{(i * 13) % 60:02d}Z INFO charge ok "
                     f"order=ord_{50000 + i * 37} region={region} "
                     f"amount={rng.randint(5, 400)}.{rng.randint(0, 99):02d} "
                     f"provider_request=req_{hex_id(rng, 6)}")
    return "\n".join(lines) + "\n"


def payment() -> PanelTask:
    rng = random.Random(714)
    return fact_task(
        "payment", "primary",
        "One customer's card payment was declined today. Find the declined charge in "
        "logs/payments.log and which provider account the routing table sends it to.",
        {"logs/payments.log": payment_log(rng), "config/providers.yaml": providers(rng)},
        [turn("Let me read the payments log.", bash("cat logs/payments.log")),
         turn("And the routing table.", bash("cat config/providers.yaml"))],
        {"order": ("string", "the declined order"),
         "decline_code": ("string", "the provider's decline code"),
         "amount": ("string", "the amount, as logged"),
         "region": ("string", "the order's region"),
         "account": ("string", "the provider account that region routes to")},
        {"order": "ord_58213", "decline_code": "insufficient_scope", "amount": "249.90",
         "region": "uk", "account": "acct_1UKq7Rt5"},
        Source("payment", None, "no public source: rebuilt from the study's description (a "
               "declined charge and the region-to-account mapping); the study's facts text is "
               "not readable here, so these facts are this rebuild's"))


GATEWAY_504 = ('10.2.7.41 - - [03/Sep/2026:14:22:09 +0000] "POST /api/checkout HTTP/1.1" 504 '
               '167 upstream=inventory-svc:9090 upstream_response_time=30.004 trace=7c1e0b55d2')


def access_log(rng: random.Random) -> str:
    """Gateway access lines, one 504 on checkout with its upstream and timing."""
    def noise(i: int) -> str:
        path = rng.choice(["/api/cart", "/api/products", "/healthz", "/api/session"])
        return (f'10.2.{rng.randint(0, 9)}.{rng.randint(2, 250)} - - [03/Sep/2026:14:'
                f'{i % 60:02d}:{(i * 11) % 60:02d} +0000] "GET {path} HTTP/1.1" 200 '
                f'{rng.randint(200, 4000)} upstream=web:8000 '
                f'upstream_response_time=0.{rng.randint(10, 400):03d} trace={hex_id(rng, 10)}')
    return planted_lines(60, 38, GATEWAY_504, noise)


def checkout_504() -> PanelTask:
    rng = random.Random(903)
    return read_task(
        "checkout_504", "primary",
        "Checkout timed out for a customer at the gateway. Find the failing request in "
        "logs/access.log.",
        Read("logs/access.log", access_log(rng), "Let me read the gateway access log."),
        {"status": ("integer", "the failing request's status"),
         "upstream": ("string", "the upstream it waited on (host:port)"),
         "upstream_seconds": ("number", "how long the upstream took, in seconds"),
         "trace": ("string", "its trace id")},
        {"status": 504, "upstream": "inventory-svc:9090", "upstream_seconds": 30.004,
         "trace": "7c1e0b55d2"},
        Source("checkout_504", None, "no public source: rebuilt from the study's description "
               "(a gateway 504 on checkout); these facts are this rebuild's"))


PRIMARY = [payment, checkout_504, server_error, build_token]
