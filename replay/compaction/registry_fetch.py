"""Find a pinned package on npm or PyPI, download it, and check its digest.

Digests are written as npm writes `dist.integrity` (`sha512-<base64>`) or as `sha256:<hex>` for a
PyPI wheel. Registry base URLs are parameters so that a mirror (or a test server) can stand in.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import httpx

from replay.core.errors import InputError

NPM_REGISTRY = "https://registry.npmjs.org"
PYPI_INDEX = "https://pypi.org"
TIMEOUT = httpx.Timeout(60.0, connect=15.0)
_CHUNK = 1 << 20


class RegistryUnreachable(InputError):
    """A registry could not be reached at all (offline, refused, timed out)."""


class RegistryLookupError(InputError):
    """A registry answered, but not with the pinned package."""


class PackageDigestMismatch(InputError):
    """A package's digest is not the pinned one."""


@dataclass(frozen=True)
class PackageFile:
    """A downloadable package file and the digest its registry lists for it."""

    url: str
    filename: str
    digest: str


def npm_package_file(
    client: httpx.Client, package: str, version: str, registry: str = NPM_REGISTRY
) -> PackageFile:
    """The tarball of `package@version` from an npm registry's version document."""
    url = f"{registry.rstrip('/')}/{quote(package, safe='@')}/{quote(version)}"
    dist = _json(_request(client, url)).get("dist") or {}
    if "tarball" not in dist or "integrity" not in dist:
        raise RegistryLookupError(f"{url} lists no tarball with an integrity digest")
    tarball = urljoin(url, dist["tarball"])
    return PackageFile(tarball, _basename(tarball), dist["integrity"])


def pypi_wheel_file(
    client: httpx.Client,
    package: str,
    version: str,
    python: str,
    pinned: str,
    index: str = PYPI_INDEX,
) -> PackageFile:
    """The wheel of `package==version` for Python `python` from PyPI's JSON API.

    Among wheels whose tags suit that Python (pure wheels: `py3`, `py3X` or `cp3X`, abi `none`,
    platform `any`), the one with the `pinned` digest is chosen. The version document is asked
    first; some mirrors serve only the project document, whose `releases` table is used then.
    """
    base = f"{index.rstrip('/')}/pypi/{quote(package)}"
    url = f"{base}/{quote(version)}/json"
    response = _request(client, url)
    if response.status_code == 404:
        url = f"{base}/json"
        files = (_json(_request(client, url)).get("releases") or {}).get(version) or []
    else:
        files = _json(response).get("urls") or []
    wheels = [wheel for entry in files if (wheel := _wheel(entry, url, python)) is not None]
    if not wheels:
        raise RegistryLookupError(f"{package}=={version} has no wheel for Python {python} at {url}")
    for wheel in wheels:
        if wheel.digest == pinned:
            return wheel
    listed = ", ".join(f"{wheel.filename} {wheel.digest}" for wheel in wheels)
    raise PackageDigestMismatch(
        f"{package}=={version}: pinned wheel {pinned}, registry lists {listed}"
    )


def download(client: httpx.Client, file: PackageFile, dest: Path, pinned: str) -> None:
    """Stream `file` to `dest`, checking the registry's digest and the download against `pinned`."""
    if file.digest != pinned:
        raise PackageDigestMismatch(
            f"{file.filename}: registry lists digest {file.digest}, pinned {pinned}"
        )
    hasher = hashlib.new("sha512" if pinned.startswith("sha512-") else "sha256")
    try:
        with client.stream("GET", file.url) as response:
            _check_status(response)
            with dest.open("wb") as out:
                for chunk in response.iter_bytes(_CHUNK):
                    hasher.update(chunk)
                    out.write(chunk)
    except httpx.TransportError as exc:
        raise _unreachable(file.url, exc) from None
    actual = _format_digest(pinned, hasher.digest())
    if actual != pinned:
        raise PackageDigestMismatch(f"{file.filename}: downloaded digest {actual}, pinned {pinned}")


def _request(client: httpx.Client, url: str) -> httpx.Response:
    try:
        return client.get(url)
    except httpx.TransportError as exc:
        raise _unreachable(url, exc) from None


def _json(response: httpx.Response) -> dict[str, Any]:
    _check_status(response)
    try:
        document = response.json()
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise RegistryLookupError(f"{response.request.url} did not answer with a JSON object")
    return document


def _check_status(response: httpx.Response) -> None:
    if response.status_code != 200:
        raise RegistryLookupError(f"HTTP {response.status_code} from {response.request.url}")


def _unreachable(url: str, exc: httpx.TransportError) -> RegistryUnreachable:
    parts = urlsplit(url)
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return RegistryUnreachable(
        f"cannot reach {parts.scheme}://{parts.netloc} ({reason}); are we offline?"
    )


def _wheel(entry: dict[str, Any], document_url: str, python: str) -> PackageFile | None:
    """A PyPI file entry as a PackageFile, if it is a wheel that suits `python`."""
    filename, url = str(entry.get("filename", "")), entry.get("url")
    sha256 = (entry.get("digests") or {}).get("sha256")
    if entry.get("packagetype") != "bdist_wheel" or not url or not sha256:
        return None
    if not _suits(filename, python):
        return None
    return PackageFile(urljoin(document_url, url), filename, f"sha256:{sha256}")


def _basename(url: str) -> str:
    return urlsplit(url).path.rsplit("/", 1)[-1] or "package"


def _suits(filename: str, python: str) -> bool:
    """Whether a wheel's tags (`name-ver[-build]-py-abi-platform.whl`) suit a pure install."""
    pieces = filename.removesuffix(".whl").split("-")
    if len(pieces) < 5:
        return False
    pythons, abis, platforms = (set(tag.split(".")) for tag in pieces[-3:])
    major, minor = python.split(".")
    wanted = {f"py{major}", f"py{major}{minor}", f"cp{major}{minor}"}
    return bool(pythons & wanted) and "none" in abis and "any" in platforms


def _format_digest(like: str, raw: bytes) -> str:
    if like.startswith("sha512-"):
        return "sha512-" + base64.b64encode(raw).decode("ascii")
    return "sha256:" + raw.hex()
