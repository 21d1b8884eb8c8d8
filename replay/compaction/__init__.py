"""Compaction: prompt sources and sync, summarizers, carriers, mechanical baselines."""
