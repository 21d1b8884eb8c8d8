"""Stage 4, agent: the fixed continuation agent's step loop and its tools."""
