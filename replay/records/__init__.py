"""The records every stage hands on or the store keeps: typed payloads, one file per family.

    snapshot     Snapshot: the working tree at a boundary
    history      History, Boundary: Phase A messages, where they stop, and their snapshot
    trajectory   Trajectory, Step: a whole Phase A run, which histories are cut from
    summary      Summary, KeptSummary: what a summarizer wrote, and what it cost
    trace        Trace, Action: everything one continuation did
    grade        Grade: the verdict on one test run
    continuation KeptContinuation: a graded continuation as the store keeps it
    validation   Validation: the verdict on one instance before any model is called
    plan         Plan, PlannedHistory: what a stored sweep shares and what it varies
    cell         CellId, CellResult, Spend: one unit of work and its result
    outcome      Outcome: the label of an (instance, summarizer) pair
    retention    KeptScore, ScoreDetail: the recurring-detail retention of a POST summary
    stored       how a stored JSON names its format and version

A record that is stored carries a `SCHEMA` version, raised when its stored form changes, and
its stored JSON names its `FORMAT` and that version (`stored.stamped`). This
package imports only `replay.core` (and pydantic and the standard library), so every stage may
import it.
"""
