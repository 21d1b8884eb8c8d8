"""Fact probes: after compaction, ask for the facts a history established, as strict JSON.

A probe belongs to a history (`files`): a follow-up question naming JSON fields, and the facts
expected. Each method of a run (Full, every summarizer, fused ones too) gives a context, the
answering model replies `{"facts": {...}}` (`answering`), each field is graded by recursive,
type-strict equality (`grading`), and scores are averaged over fields, answers, generations and
histories, per method and cohort (`scores`). The probe never enters collection or compression.
"""
