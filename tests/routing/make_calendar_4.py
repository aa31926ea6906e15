# Writes etom-calendar-4.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28
# (twelfth round) after the calendar reading (registry/src/routing/calendar.rs) took its last
# form (a thing in one's calendar with its time, read on the third set's misses), and committed
# before it was measured: the check the third set no longer is. Groups as in make_calendar_2.py.
from calendar_groups import CREATE, LIST, FREE, UPDATE, ATTENDEES, DELETE
from set_writer import write
Q = [
    ("Can you fit a coffee with Jonas into my Wednesday?", [CREATE]),
    ("I'd like a recurring gym session every Tuesday at 7am in my calendar", [CREATE]),
    ("Schedule the quarterly review with finance for the 12th at 2pm", [CREATE]),
    ("What have I got on this afternoon?", [LIST]),
    ("Do I have any conflicts on Monday between 1 and 3?", [FREE]),
    ("When am I meeting Sofia next?", [LIST]),
    ("The client demo on Friday needs to start at 11 instead of 10", [UPDATE]),
    ("Can you shift my one-on-one with Raj by thirty minutes?", [UPDATE]),
    ("Call off Saturday's team breakfast", [DELETE]),
    ("Please get rid of the 'Budget sync' event ev-88 from my calendar", [DELETE]),
    ("Add lena@example.com and max@example.com as guests on the launch meeting", [ATTENDEES]),
    ("Clear my afternoon tomorrow, I'm taking it off", [DELETE]),
]
write("etom-calendar-4.jsonl", "CO", Q)
