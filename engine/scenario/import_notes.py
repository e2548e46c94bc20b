"""What a pasted cluster's partition state says that a scenario's start cannot hold
(docs/scenario-format.md §7.4): a scenario's topics start healthy (scenario-format.md §1.2: the
first replica leads, every replica is in the ISR, no ELR), so every difference is a note the user
reads, never dropped in silence.
"""
from engine.scenario.import_text import examples, plural


def state_notes(described):
    """The notes on leaders, ISRs, offline partitions, ELRs, reassignments and deletions."""
    notes = []
    moved, leaderless, out_of_isr, offline, elr, moving = [], [], {}, {}, [], []
    for t in described:
        for p in (t.partitions[i] for i in range(t.partition_count)):
            name = f"{t.name}-{p.partition}"
            if p.leader is None:
                leaderless.append(name)
            elif p.leader != p.replicas[0]:
                moved.append(f"{name} (leader {p.leader}, preferred {p.replicas[0]})")
            for r in p.replicas:
                if r not in p.isr:
                    out_of_isr.setdefault(r, []).append(name)
            for r in p.offline:
                offline.setdefault(r, []).append(name)
            if p.elr or p.last_known_elr:
                elr.append(f"{name} (Elr {_ids(p.elr)}, LastKnownElr {_ids(p.last_known_elr)})")
            if p.adding or p.removing:
                moving.append(f"{name} (adding {_ids(p.adding)}, removing {_ids(p.removing)})")
    if leaderless:
        notes.append(f"at import, {plural(len(leaderless), 'partition')} had no leader (Leader: none): "
                     f"{examples(leaderless)}; the simulation starts each with its first replica leading")
    if moved:
        notes.append(f"at import, {plural(len(moved), 'partition')} had a leader other than the preferred replica "
                     f"(the first of Replicas): {examples(moved)}; the simulation starts with every preferred "
                     "replica leading")
    for broker, names in sorted(out_of_isr.items()):
        notes.append(f"at import, broker {broker} was out of the ISR of {plural(len(names), 'partition')} "
                     f"({examples(names)}); the simulation starts with every replica in sync")
    for broker, names in sorted(offline.items()):
        notes.append(f"at import, broker {broker}'s replica was offline in {plural(len(names), 'partition')} "
                     f"({examples(names)}); the simulation starts every replica online")
    if elr:
        notes.append(f"at import, {plural(len(elr), 'partition')} had Eligible Leader Replicas: {examples(elr)}; "
                     "the simulation starts with none")
    if moving:
        notes.append(f"at import, {plural(len(moving), 'partition')} {'was' if len(moving) == 1 else 'were'} being "
                     f"reassigned: {examples(moving)}; the simulation starts with every replica of Replicas assigned "
                     "and no reassignment")
    marked = [t.name for t in described if t.marked_for_deletion]
    if marked:
        notes.append(f"topic {examples(marked)} {'was' if len(marked) == 1 else 'were'} marked for deletion at "
                     "import; the simulation keeps it")
    return notes


def _ids(ids):
    return ",".join(str(i) for i in ids) if ids else "-"
