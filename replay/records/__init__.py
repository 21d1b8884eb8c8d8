"""The records every stage hands on or the store keeps: typed payloads, one file per family.

    snapshot     Snapshot: the working tree at a boundary
    history      History, Boundary: Phase A messages, where they stop, and their snapshot
    summary      Summary: what a summarizer wrote, and what it cost
    trace        Trace, Action: everything one continuation did
    grade        Grade: the verdict on one test run
    validation   Validation: the verdict on one instance before any model is called
    plan         Plan, PlannedHistory: what a stored sweep shares and what it varies
    cell         CellId, CellResult, Spend: one unit of work and its result
    outcome      Outcome: the label of an (instance, summarizer) pair

A record that is stored carries a `SCHEMA` version, raised when its stored form changes. This
package imports only `replay.core` (and pydantic and the standard library), so every stage may
import it.
"""
