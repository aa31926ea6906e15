# Writes bfcl-arithmetic.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the BFCL catalog given as the first argument. Written 2026-11-29
# (nineteenth round) after the reading of an operator between two numbers was built on two of
# BFCL's misses, and committed before it was measured; never built on: other numbers, operators
# and phrasings. BFCL's catalog has calculators that multiply and that add two numbers.
from set_writer import named, write
MULTIPLY = named("bfcl/multiply", "bfcl/CalcProduct", "bfcl/mult")
ADD = named("bfcl/sum", "bfcl/calculate_sum", "bfcl/add")
write("bfcl-arithmetic.jsonl", "arithmetic", [
    ("What's 57 times 12?", [MULTIPLY]),
    ("Quick one: 365 × 24?", [MULTIPLY]),
    ("I need 48 plus 76.", [ADD]),
    ("what does 3.5 + 2.25 come to", [ADD]),
    ("Compute 19 multiplied by 23, please.", [MULTIPLY]),
    ("How much is 250 plus 175?", [ADD]),
    ("A box holds 12 and I have 9 boxes, so 12 times 9 is how many?", [MULTIPLY]),
    ("Give me the total of 1,500 + 2,750", [ADD]),
])
