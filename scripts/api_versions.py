"""Writes static/js/api_versions.js: for each era, the request types a broker of that release
advertises in its ApiVersions response (id, name, oldest and latest version), and the ones
kafka-broker-api-versions.sh would list as UNSUPPORTED. Read from Kafka's own sources at the
release of each era (the local git mirrors, docs/architecture.md), never typed by hand:

* 0.10.2: ``Protocol.REQUESTS`` (a version is supported from its first non-null schema), names
  from ``ApiKeys``; the broker advertises every key (``ApiVersionsResponse.API_VERSIONS_RESPONSE``).
* 1.1, 2.0: each request class's ``schemaVersions()``; ``ApiKeys.oldestVersion()`` is 0; every key.
* 2.4 – 2.6: the request messages' ``validVersions`` (clients/.../common/message/*Request.json);
  every key. 2.7: ``ApiKeys.enabledApis()`` (the Raft requests are not enabled yet).
* 3.0 – 3.7 (ZooKeeper): ``ApiVersionsResponse.filterApis`` over the ``zkBroker`` listener: the
  latest version minus one where it is unstable (``unstable.api.versions.enable`` is false), and
  from 3.7 without the client-telemetry requests (no telemetry reporter configured, KIP-714).
  The tool lists UNSUPPORTED the ``zkBroker`` keys (3.0, 3.3) or the client keys (3.7+) the broker
  did not advertise (``NodeApiVersions.toString``).
* 3.9 and 4.1 (KRaft): ``intersectForwardableApis`` over the ``broker`` listener, with the
  active controller of the same release (a forwardable request only where the ``controller``
  listener has it too, in the versions both have).

Usage: python scripts/api_versions.py   (KAFKA_GIT and KAFKA_GIT_4 name the git clones to read)
"""
import json
import os
import re
import subprocess

#: git clones of apache/kafka (release tags) and of a fork with the 3.9.0 and 4.1.0 commits
APACHE = os.environ.get("KAFKA_GIT", "/work/.mirror/apache+kafka/repo")
CONFLUENT = os.environ.get("KAFKA_GIT_4", "/work/.mirror/confluentinc+kafka/repo")
#: era -> (mirror, release tag or commit, how its broker chooses what to advertise)
ERAS = {
    "0.10": (APACHE, "0.10.2.2", "protocol"),
    "1.1": (APACHE, "1.1.1", "schemas"),
    "2.0": (APACHE, "2.0.0", "schemas"),
    "2.0.1": (APACHE, "2.0.1", "schemas"),
    "2.4": (APACHE, "2.4.1", "all"),
    "2.6": (APACHE, "2.6.0", "all"),
    "2.7": (APACHE, "2.7.2", "enabled"),
    "3.0": (APACHE, "3.0.2", "zkBroker"),
    "3.3": (APACHE, "3.3.2", "zkBroker"),
    "3.7": (APACHE, "3.7.0", "zkBroker"),
    "3.9-kraft": (CONFLUENT, "cc53a632ed", "broker"),
    "4.1": (CONFLUENT, "13f70256db", "broker"),
}
MESSAGES = "clients/src/main/resources/common/message"
REQUESTS_DIR = "clients/src/main/java/org/apache/kafka/common/requests"
API_KEYS = "clients/src/main/java/org/apache/kafka/common/protocol/ApiKeys.java"
TELEMETRY = ("GetTelemetrySubscriptions", "PushTelemetry")
OUT = os.path.join(os.path.dirname(__file__), "..", "static", "js", "api_versions.js")


def show(repo, rev, path):
    return subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], check=True, capture_output=True,
                          text=True).stdout


def ls(repo, rev, path):
    out = subprocess.run(["git", "-C", repo, "ls-tree", "--name-only", f"{rev}:{path}"], check=True,
                         capture_output=True, text=True).stdout
    return out.split()


def enum_keys(source):
    """[(id, name, the rest up to the next constant)] of ApiKeys' constants written with an id and
    a name (the releases before the generated message types)."""
    starts = list(re.finditer(r'^    [A-Z_]+\((\d+),\s*"(\w+)"', source, re.M))
    ends = [m.start() for m in starts[1:]] + [len(source)]
    return [(int(m.group(1)), m.group(2), source[m.end():end]) for m, end in zip(starts, ends)]


def schema_array(text, name):
    """Versions of a ``Schema[] NAME = new Schema[] {A, null, B}`` (or ``return new Schema[] {...}``)."""
    m = re.search(name + r"\s*=?\s*new Schema\[\]\s*\{([^}]*)\}", text, re.S)
    entries = [e.strip() for e in m.group(1).split(",") if e.strip()]
    return entries


def protocol_era(repo, rev):
    """0.10.2: Protocol.REQUESTS."""
    keys = enum_keys(show(repo, rev, API_KEYS))
    protocol = show(repo, rev, "clients/src/main/java/org/apache/kafka/common/protocol/Protocol.java")
    enum_name = dict(re.findall(r"^\s+([A-Z_]+)\((\d+),", show(repo, rev, API_KEYS), re.M))
    arrays = dict(re.findall(r"REQUESTS\[ApiKeys\.([A-Z_]+)\.id\]\s*=\s*([A-Z_]+);", protocol))
    out = []
    for key_id, name, _rest in keys:
        constant = next(c for c, i in enum_name.items() if int(i) == key_id)
        entries = schema_array(protocol, r"Schema\[\] " + arrays[constant])
        first = next(i for i, e in enumerate(entries) if e != "null")
        out.append([key_id, name, first, len(entries) - 1])
    return out, []


def schemas_era(repo, rev):
    """1.1, 2.0: the request classes' schemaVersions(); oldestVersion() is 0."""
    out = []
    for key_id, name, rest in enum_keys(show(repo, rev, API_KEYS)):
        cls = re.search(r"(\w+Request)\.schemaVersions\(\)", rest).group(1)
        source = show(repo, rev, f"{REQUESTS_DIR}/{cls}.java")
        body = re.search(r"schemaVersions\(\)\s*\{(.*?)\n    \}", source, re.S).group(1)
        out.append([key_id, name, 0, len(schema_array(body, "return")) - 1])
    return out, []


def messages(repo, rev):
    """{api key: request message spec} from the JSON message definitions (comments stripped)."""
    specs = {}
    for fname in ls(repo, rev, MESSAGES):
        if not fname.endswith("Request.json"):
            continue
        text = re.sub(r"^\s*//.*$", "", show(repo, rev, f"{MESSAGES}/{fname}"), flags=re.M)
        spec = json.loads(text)
        if spec.get("type") == "request":
            specs[spec["apiKey"]] = spec
    return specs


def version_range(spec, stable_only=True):
    lo, _, hi = spec["validVersions"].partition("-")
    lo, hi = int(lo), int(hi or lo)
    if stable_only and spec.get("latestVersionUnstable"):
        hi -= 1
    return lo, hi


def json_era(repo, rev, mode):
    specs = messages(repo, rev)
    # the name the tool prints is ApiKeys.name: written out in 2.x (where it can differ from the
    # message's, "ListOffsets" for ListOffsetRequest), the message type's name from 3.0
    keys = enum_keys(show(repo, rev, API_KEYS))
    name = {k: s["name"][:-len("Request")] for k, s in specs.items()}
    name.update({key_id: key_name for key_id, key_name, _rest in keys})
    if keys:                          # 2.x: the keys of the enum, not every message file
        specs = {k: spec for k, spec in specs.items() if k in {key_id for key_id, _n, _r in keys}}

    def listening(spec, listener):
        return listener in spec.get("listeners", [])

    if mode in ("all", "enabled"):
        disabled = set()
        if mode == "enabled":       # 2.7: ApiKeys constants whose isEnabled argument is false
            for key_id, _name, rest in keys:
                if re.match(r"\s*,\s*(true|false)\s*,\s*false\b", rest):
                    disabled.add(key_id)
        advertised = [k for k in sorted(specs) if k not in disabled]
        return [[k, name[k], *version_range(specs[k], False)] for k in advertised], []
    out = []
    for k in sorted(specs):
        spec = specs[k]
        if not listening(spec, mode):
            continue
        if name[k] in TELEMETRY:
            continue                  # no client telemetry reporter configured (KIP-714, 3.7+)
        lo, hi = version_range(spec)
        if mode == "broker" and spec.get("forwardable"):
            if not listening(spec, "controller"):
                continue
            clo, chi = version_range(spec)         # the controller of the same release
            lo, hi = max(lo, clo), min(hi, chi)
        if hi >= lo:
            out.append([k, name[k], lo, hi])
    shown = {k for k, *_ in out}
    # NodeApiVersions.toString: UNSUPPORTED for the tool's keys the broker did not advertise
    client_only = "clientApis" in show(repo, rev, "clients/src/main/java/org/apache/kafka/clients/NodeApiVersions.java")
    listed = [k for k in sorted(specs) if listening(specs[k], "zkBroker") or (client_only and listening(specs[k], "broker"))]
    return out, [[k, name[k]] for k in listed if k not in shown]


def era_table(repo, rev, mode):
    if mode == "protocol":
        return protocol_era(repo, rev)
    if mode == "schemas":
        return schemas_era(repo, rev)
    return json_era(repo, rev, mode)


def node_format(repo, rev):
    """Node.toString's words after the rack: " isFenced: false" from 4.0 (KIP-1073)."""
    source = show(repo, rev, "clients/src/main/java/org/apache/kafka/common/Node.java")
    return " isFenced: false" if '" isFenced: "' in source else ""


def main():
    data = {}
    for era, (repo, rev, mode) in ERAS.items():
        advertised, unsupported = era_table(repo, rev, mode)
        data[era] = {"release": rev if repo == APACHE else {"cc53a632ed": "3.9.0", "13f70256db": "4.1.0"}[rev],
                     "node_suffix": node_format(repo, rev), "apis": advertised, "unsupported": unsupported}
    lines = ["// Generated by scripts/api_versions.py from Kafka's sources at each era's release: what a",
             "// broker advertises in its ApiVersions response ([id, name, oldest, latest]) and the request",
             "// types kafka-broker-api-versions.sh lists as UNSUPPORTED. Do not edit by hand.",
             "export const API_VERSIONS = {"]
    for era, entry in data.items():
        lines.append(f"  {json.dumps(era)}: {json.dumps(entry, separators=(',', ':'))},")
    lines.append("};")
    with open(OUT, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    for era, entry in data.items():
        print(era, entry["release"], len(entry["apis"]), "advertised,", len(entry["unsupported"]), "unsupported")


if __name__ == "__main__":
    main()
