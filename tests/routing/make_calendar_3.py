# Writes etom-calendar-3.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28
# (twelfth round) after the calendar reading (registry/src/routing/calendar.rs) was widened on the
# second calendar set's misses, and committed before it was measured: again other words for the
# same asks, the check the second set no longer is. Groups as in make_calendar_2.py.
from calendar_groups import CREATE, LIST, FREE, UPDATE, ATTENDEES, DELETE
from set_writer import write
Q = [
    ("Any gaps in my diary on Tuesday for a quick chat with Mo?", [FREE]),
    ("Get a call on the books with the Berlin office for next Monday at 4", [CREATE]),
    ("Sorry, the board meeting has to slide to Thursday", [UPDATE]),
    ("Can we nuke tomorrow's team huddle?", [DELETE]),
    ("Loop kate@example.com in on the roadmap meeting", [ATTENDEES]),
    ("Show me today's agenda", [LIST]),
    ("What time is my dentist appointment on Friday?", [LIST]),
    ("Create an event called 'Hackathon' from 9 to 5 on the 20th", [CREATE]),
    ("I need to see Dr. Patel next Wednesday afternoon, can you book it in?", [CREATE]),
    ("Push back everything after 3pm today by an hour", [UPDATE]),
    ("Which of my meetings this week clash with each other?", [LIST]),
    ("Uninvite tom@example.com from Friday's offsite planning", [ATTENDEES]),
    ("Is Thursday at 2 good for me?", [FREE]),
]
write("etom-calendar-3.jsonl", "CN", Q)
