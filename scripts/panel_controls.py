"""Control probe-panel tasks: short fixtures, every fact in a few lines of output."""

from __future__ import annotations

from panel_fixtures import GITIGNORE, Task, bash, field_spec, pyproject, turn

VERSION_FILE = "version = 4.2.0rc3\nprerelease = true\nbuild = 118\n"


def version() -> Task:
    init = '"""Version of the vers package."""\n\n__version__ = "4.1.0"\n'
    test = ('import vers\n\n\ndef test_version_is_text():\n'
            '    assert isinstance(vers.__version__, str)\n')
    new_test = test + ('\n\ndef test_version_matches_the_release_file():\n'
                       '    fields = dict(line.split(" = ") for line in '
                       'open("RELEASE").read().splitlines())\n'
                       '    assert vers.__version__ == fields["version"]\n')
    return Task(
        name="version", cohort="control",
        problem=("vers.__version__ disagrees with the RELEASE file at the root of the "
                 "repository, which is the source of truth. Make them agree."),
        files={".gitignore": GITIGNORE, "pyproject.toml": pyproject("vers", "Versions"),
               "RELEASE": VERSION_FILE, "vers/__init__.py": init, "tests/test_version.py": test},
        fixed={"vers/__init__.py": init.replace("4.1.0", "4.2.0rc3")},
        tests={"tests/test_version.py": new_test},
        fail_to_pass=["tests/test_version.py::test_version_matches_the_release_file"],
        pass_to_pass=["tests/test_version.py::test_version_is_text"],
        steps=[turn("Let me read the release file.", bash("cat RELEASE")),
               turn("And the package.", bash("cat vers/__init__.py"))],
        reason="both short files read, no edit yet",
        probes=[{"id": "release", "question": "What do the release file and the package say?",
                 "fields": {
                     "version": field_spec("string", "the version the release file names"),
                     "prerelease": field_spec("boolean", "whether it is a pre-release, per "
                                              "the file"),
                     "build": field_spec("integer", "its build number"),
                     "package_version": field_spec("string", "the version the package "
                                                   "declares")},
                 "expected": {"version": "4.2.0rc3", "prerelease": True, "build": 118,
                              "package_version": "4.1.0"}}])


SERVICE = '[server]\nhost = "0.0.0.0"\nport = 8443\nworkers = 6\ntls = true\n'
APP = '''"""Where the service listens."""

HOST = "127.0.0.1"
PORT = 8080
WORKERS = 2


def settings() -> dict:
    return {"host": HOST, "port": PORT, "workers": WORKERS}
'''
APP_FIXED = '''"""Where the service listens: the [server] table of service.toml."""

import tomllib


def settings() -> dict:
    with open("service.toml", "rb") as handle:
        server = tomllib.load(handle)["server"]
    return {"host": server["host"], "port": server["port"], "workers": server["workers"]}
'''


def port() -> Task:
    test = ('from srv.app import settings\n\n\ndef test_settings_has_three_keys():\n'
            '    assert set(settings()) == {"host", "port", "workers"}\n')
    new_test = test + ('\n\ndef test_settings_come_from_the_file():\n'
                       '    assert settings() == {"host": "0.0.0.0", "port": 8443, '
                       '"workers": 6}\n')
    return Task(
        name="port", cohort="control",
        problem=("The service listens on the wrong address: srv/app.py must take host, port "
                 "and workers from the [server] table of service.toml instead of its own "
                 "constants."),
        files={".gitignore": GITIGNORE, "pyproject.toml": pyproject("srv", "A service"),
               "service.toml": SERVICE, "srv/__init__.py": "", "srv/app.py": APP,
               "tests/test_app.py": test},
        fixed={"srv/app.py": APP_FIXED}, tests={"tests/test_app.py": new_test},
        fail_to_pass=["tests/test_app.py::test_settings_come_from_the_file"],
        pass_to_pass=["tests/test_app.py::test_settings_has_three_keys"],
        steps=[turn("Let me read the service file.", bash("cat service.toml")),
               turn("And the app.", bash("cat srv/app.py"))],
        reason="both short files read, no edit yet",
        probes=[{"id": "server", "question": "What do the file and the app say?",
                 "fields": {
                     "port": field_spec("integer", "the port service.toml sets"),
                     "workers": field_spec("integer", "the workers service.toml sets"),
                     "tls": field_spec("boolean", "whether service.toml turns TLS on"),
                     "host": field_spec("string", "the host service.toml sets"),
                     "hardcoded_port": field_spec("integer", "the port srv/app.py hardcodes")},
                 "expected": {"port": 8443, "workers": 6, "tls": True, "host": "0.0.0.0",
                              "hardcoded_port": 8080}}])


ENV_EXAMPLE = ("DATABASE_URL=postgres://app@db:5432/app\nCACHE_URL=redis://cache:6379/0\n"
               "SECRET_KEY=change-me\nLOG_LEVEL=info\n")
SETTINGS = '''"""Settings from the environment."""

import os


def database_url() -> str:
    return os.environ.get("DATABSE_URL", "sqlite:///local.db")


def cache_url() -> str:
    return os.environ.get("CACHE_URL", "redis://localhost:6379/0")
'''


def envvar() -> Task:
    test = ('from app.settings import cache_url\n\n\ndef test_cache_url(monkeypatch):\n'
            '    monkeypatch.setenv("CACHE_URL", "redis://x/1")\n'
            '    assert cache_url() == "redis://x/1"\n')
    new_test = test + ('\n\ndef test_database_url(monkeypatch):\n'
                       '    from app.settings import database_url\n\n'
                       '    monkeypatch.setenv("DATABASE_URL", "postgres://x/y")\n'
                       '    assert database_url() == "postgres://x/y"\n')
    return Task(
        name="envvar", cohort="control",
        problem=("The app ignores the database set in its environment and always falls back "
                 "to a local default. Find out why and fix it."),
        files={".gitignore": GITIGNORE, "pyproject.toml": pyproject("app", "An app"),
               ".env.example": ENV_EXAMPLE, "app/__init__.py": "", "app/settings.py": SETTINGS,
               "tests/test_settings.py": test},
        fixed={"app/settings.py": SETTINGS.replace("DATABSE_URL", "DATABASE_URL")},
        tests={"tests/test_settings.py": new_test},
        fail_to_pass=["tests/test_settings.py::test_database_url"],
        pass_to_pass=["tests/test_settings.py::test_cache_url"],
        steps=[turn("Let me read the example environment.", bash("cat .env.example")),
               turn("And where the app reads it.", bash("grep -n environ app/settings.py"))],
        reason="both short outputs read, no edit yet",
        probes=[{"id": "variables", "question": "What do the example and the settings show?",
                 "fields": {
                     "misspelled": field_spec("string", "the variable name the app reads "
                                              "for the database"),
                     "line": field_spec("integer", "the line of app/settings.py reading it"),
                     "fallback": field_spec("string", "the database it falls back to"),
                     "variables": field_spec("array", "every variable .env.example defines",
                                             order_free=True)},
                 "expected": {"misspelled": "DATABSE_URL", "line": 7,
                              "fallback": "sqlite:///local.db",
                              "variables": ["DATABASE_URL", "CACHE_URL", "SECRET_KEY",
                                            "LOG_LEVEL"]}}])
