"""Where the service listens."""

HOST = "127.0.0.1"
PORT = 8080
WORKERS = 2


def settings() -> dict:
    return {"host": HOST, "port": PORT, "workers": WORKERS}
