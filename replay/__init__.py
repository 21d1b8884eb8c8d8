"""replay: measure what context compaction costs coding agents that resume a half-done repair.

The packages follow the protocol in the order data flows; each imports only from those above it.

    core/                  the ground floor: errors and the Fault record, the closed
                              vocabularies (StrEnums), the one content digest, atomic file
                              writes, file locations (paths), identifier rules (names)
    records/               typed records that cross stages or are stored: Snapshot, History,
                              Summary, Trace, Grade, Validation, Plan, CellResult, Outcome
    store                  the SQLite store
    instances/             1. SWE-bench records, loaders, suites, selection
    environments/          2. Environment and Backend protocols; local and docker backends;
                              snapshots, recipes derived from swebench's specs (specs, derive),
                              repositories, interpreters
    models/                3. Model protocol, providers over httpx, retries, call cache, fake server
    agent/                 4. the continuation agent: its step loop and tools
    judge/                 5. running and grading an instance's tests; validation (step 2);
                              the recipes' coverage check
    histories/             6. Phase A histories: boundaries, trajectories, collect, import
    compaction/            7. prompt sources, summarizers, carriers, mechanical baselines,
                              fusion of a summary with judged evidence
    sweep/                 8. plans of cells, the cell pipeline (continuation + grading), labels,
                              execution on workers or Ray, confirmation (step 8), progress
    measures/              9. retention scores and fact probes over stored artifacts
    report/               10. tables, exports and the heatmap of a run; the web view (`web/`)
    commands/, cli         the `replay` command: parse, call one stage function, print
"""
