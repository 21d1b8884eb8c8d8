"""The public Python API of replay: every job of the `replay` command as a plain function.

    instances         a suite's instances, narrowed by id, regex and slice
    boundaries        boundary rules, parsed (where a Phase A history stops)
    prompt            a production compaction prompt, synced when missing (`sync_prompts`)
    validate          protocol step 2 for instances, before any model is called
    collect           Phase A histories from an agent run from the start of each task
    import_histories  Phase A histories from trajectories users already have
    run_cell          one PRE or POST cell on a restored snapshot, graded
    plan, sweep       a backbone or prompt sweep, kept as a run (`estimate`: its dry run;
                      `load`: a run with what its cells need loaded, as a sweep runs it)
    confirm           the three-run confirmation of a run's damaged pairs
    study             the paper's whole Task Preservation design as two runs (`study_estimate`:
                      its dry run; `study_report`: its tables in the paper's shapes)
    report, export    a run's outcomes, rates and tables; its export files and web view
    retention         recurring-detail retention of a run's summaries (`session_retention`:
                      of real sessions' compactions)
    probe             fact probes of a run's (or a selection's) summaries (`probe_plan`: the
                      dry run)
    remove_containers                   what crashed engines left behind (`clean`)
    models, check_model                 the model aliases; a check of one model
    check_recipes, recipe               the recipes' coverage of a dataset; one recipe
    view_server                         the web view of a run, ready to serve

Functions take typed parameters and return the engine's records; none prints. What a person
would want to see while one works goes to a `Listener` (`SILENT` unless one is given): the
command line's prints it. Bad input raises `InputError`, a fault that stops every call `Halt`
(both in `replay.core.errors`).
"""

from replay.api.cells import CellOptions, CellRun, run_cell
from replay.api.listen import SILENT, Listener, Progress, Silent
from replay.api.prepare import (
    Collection,
    Imports,
    boundaries,
    collect,
    import_histories,
    instances,
    prompt,
    sync_prompts,
    validate,
)
from replay.api.probes import Probed, ProbeOptions, Selection, probe, probe_plan
from replay.api.results import (
    Exported,
    RunRetention,
    export,
    report,
    retention,
    session_retention,
)
from replay.api.studies import (
    Backbone,
    StudyDesign,
    StudyEstimate,
    StudyReport,
    parse_backbones,
    study,
    study_estimate,
    study_report,
)
from replay.api.sweeps import (
    NO_CHOICE,
    Confirmation,
    HistoryChoice,
    Run,
    RunOptions,
    SweepEstimate,
    SweepOutcome,
    confirm,
    estimate,
    load,
    plan,
    summarizers,
    sweep,
)
from replay.api.upkeep import (
    Coverage,
    ModelRow,
    Removed,
    check_model,
    check_recipes,
    models,
    recipe,
    remove_containers,
    view_server,
)
from replay.records.cell import CellId, CellResult
from replay.records.plan import Plan

__all__ = [
    "Backbone", "CellId", "CellOptions", "CellResult", "CellRun", "Collection", "Confirmation",
    "Coverage", "Exported", "HistoryChoice", "Imports", "Listener", "ModelRow", "NO_CHOICE",
    "Plan", "ProbeOptions", "Probed", "Progress", "Removed", "Run", "RunOptions", "RunRetention",
    "SILENT", "Selection", "Silent", "StudyDesign", "StudyEstimate", "StudyReport",
    "SweepEstimate", "SweepOutcome", "boundaries", "check_model", "check_recipes", "collect",
    "confirm", "estimate", "export", "import_histories", "instances", "load", "models",
    "parse_backbones", "plan", "probe",
    "probe_plan", "prompt", "recipe", "remove_containers", "report", "retention",
    "run_cell", "session_retention", "study", "study_estimate", "study_report", "summarizers",
    "sweep", "sync_prompts", "validate", "view_server",
]
