"""replay: measure what context compaction costs coding agents that resume a half-done repair.

The packages follow the protocol in the order data flows; each imports only from those above it.

    core/                  the ground floor: errors and the Fault record, the closed
                              vocabularies (StrEnums), the one content digest, atomic file
                              writes, file locations (paths), identifier rules (names)
    records/               typed records that cross stages or are stored: Snapshot, History,
                              Summary, Trace, Grade, Validation, Plan, CellResult, Outcome
    store/                 the SQLite store: every table, the one schema version and its
                              migrations, the key-to-path rule and the atomic artifact write;
                              one repository per stored concept, records in and out
    instances/             1. SWE-bench records, loaders, suites, selection
    environments/          2. Environment and Backend protocols; local and docker backends;
                              snapshots, recipes derived from swebench's specs (specs, derive),
                              repositories, interpreters
    models/                3. Model protocol, providers over httpx, retries, call cache, fake server
    agent/                 4. the continuation agent: its step loop, tools and dialects/ (one
                              class per action format, registered by name)
    judge/                 5. running and grading an instance's tests; validation (step 2);
                              the recipes' coverage check
    histories/             6. Phase A histories: boundaries, trajectories, collect, import, and
                              which one each instance of a run continues from (planned)
    compaction/            7. prompt sources, agents/ (one class per production compaction
                              agent, registered by name), summarizers, both carriers,
                              mechanical baselines, fusion of a summary with judged evidence
    pipeline/              8. one cell: what the store keeps, found before it is handed out
                              (lookup); then summary (kept or written) -> continuation ->
                              grade -> diagnostics (step 10) -> CellResult, in one direction;
                              each model call kept by key
    sweep/                 9. plans of cells, driving them on workers (threads) or Ray (and what
                              a remote worker sends back), labels, confirmation (step 8), progress
    measures/             10. retention scores and fact probes over stored artifacts
    corpus/               a corpus of real sessions from checkpoint branches (`replay sessions
                              collect`) and the study's retention tables on it
    report/               11. tables, exports and the heatmap of a run; the web view (`web/`)
    api/                   the public Python API: every job of the command as a function with
                              typed parameters and records (validate, collect, import, one
                              cell, sweep, confirm, report, retention, probe, upkeep), saying
                              what it does to a Listener; `blocks` names the building blocks
                              benchmarks use. `scripts/` import the engine only through it
    commands/, cli         the `replay` command: parse, call `replay.api`, print

How a sweep runs, in the words of the code: a `Plan` (records) is what a run is (its instances,
summarizers and the frame every cell shares), kept in the store; `api.RunOptions` is how one
invocation runs it (store, workers, executor, backend, limits, budget), never kept; a `Run`
(`sweep/run.py`, made once by `api.load`) is both with what the cells need loaded (instances,
histories, parsed summarizers, verdicts, kept cells), handed as it is to the driver and to
every worker; its `Settings` are what every cell of the run shares (agent, carrier, steps,
temperature), and `AgentConfig` is one continuation loop's limits, made from the settings.
"""
