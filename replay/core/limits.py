"""The ranges of the numbers a user gives (options, model settings, rules), in one place: each is
what the OS, SQLite, a float and the providers hold with room to spare, and far beyond any real
use. docs/cli-contract.md lists every option's."""

MAX_SECONDS = 7 * 24 * 3600.0  # a timeout or deadline: a week at most
MAX_SAMPLE_INDEX = 1_000_000  # a sample index (the request's seed): SQLite and every API hold it
MAX_TEMPERATURE = 2.0  # the largest temperature providers accept
MAX_STEPS = 10_000  # an agent's step limit, a boundary's step
MAX_TOKENS = 100_000_000  # a context, a boundary's or a tail's tokens, a reply's max_tokens
MAX_WORKERS = 256  # things run or asked at once, threads
MAX_DOLLARS = 1_000_000.0  # a budget, a price per million tokens
MAX_COUNT = 1_000  # generations, answers, rows sampled
MAX_CHARS = 100_000_000  # characters read
