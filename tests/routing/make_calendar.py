# Writes etom-calendar.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (twelfth
# round) and committed before it was measured: one's calendar in everyday words ("am I free …",
# "push my 2pm", "block two hours", "drop Alex from …"), each step with one group: every calendar
# tool of the catalog (Google Workspace, Google Tools, the two Outlook servers, DAV) that does it.
# One fix after the first measurement, before any rule: Outlook's find_free_slots, missed when the
# set was written, answers "am I free …" too and joined those two groups (it was CL-005's first).
from calendar_groups import CREATE, LIST, FREE, UPDATE, ATTENDEES, DELETE, CALENDARS, ONE
from set_writer import write
Q = [
    ("Put a dentist appointment in my calendar for Tuesday at 3pm", [CREATE]),
    ("Book a 30-minute call with dana@example.com on Thursday at 10", [CREATE]),
    ("Block two hours on Wednesday morning for deep work", [CREATE]),
    ("Set up a team lunch next Friday at noon and invite lee@example.com and sam@example.com", [CREATE]),
    ("Am I free on Friday afternoon?", [FREE]),
    ("What does my week look like?", [LIST]),
    ("What's on my calendar tomorrow?", [LIST]),
    ("When is my next meeting with the design team?", [LIST]),
    ("Push my 2pm meeting to 4pm", [UPDATE]),
    ("Move the standup (event ev-42) to 9:30", [UPDATE]),
    ("Rename tomorrow's 'sync' to 'Roadmap review'", [UPDATE]),
    ("Add sam@example.com to the design review invite", [ATTENDEES]),
    ("Take alex@example.com off tomorrow's planning meeting", [ATTENDEES]),
    ("Cancel my dentist appointment, event ev-9", [DELETE]),
    ("The offsite (event ev-77) is called off, take it out of my calendar", [DELETE]),
    ("Which calendars do I have?", [CALENDARS]),
    ("Pull up the details of meeting ev-12", [ONE]),
    ("Check whether I have anything on Thursday evening and book dinner with lee@example.com at 7", [FREE, CREATE]),
]
write("etom-calendar.jsonl", "CL", Q)
