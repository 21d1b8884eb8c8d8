"""Retention measures: which literal details a summary keeps, as pure text scoring."""
