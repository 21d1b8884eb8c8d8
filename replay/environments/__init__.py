"""Stage 2, environments: where an instance's repository lives and its commands run.

The Environment and Backend protocols (base), the local and docker backends, snapshots of the
working tree, recipes, repository sources and interpreters.
"""
