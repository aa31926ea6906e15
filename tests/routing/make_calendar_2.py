# Writes etom-calendar-2.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28
# (twelfth round) after the calendar reading (registry/src/routing/calendar.rs) was built on the
# first calendar set, and committed before it was measured: other words for the same asks ("pencil
# in", "bump", "retro", "how busy am I"), to see whether the reading holds beyond the words it was
# built on. Groups as in make_calendar.py.
from calendar_groups import CREATE, LIST, FREE, UPDATE, ATTENDEES, INVITE, DELETE, WHO
from set_writer import write
Q = [
    ("Could you find a slot next week when I can meet jo@example.com for an hour?", [FREE]),
    ("I have a doctor's appointment on the 14th at 11, please add it to my calendar", [CREATE]),
    ("Is there anything on my schedule for Monday morning?", [FREE]),
    ("Reschedule Friday's 1:1 with Priya to next Tuesday", [UPDATE]),
    ("My flight got delayed, bump the 9am client meeting to the afternoon", [UPDATE]),
    ("Send omar@example.com an invite for the budget review on Wednesday at 3", [INVITE]),
    ("Who has accepted the kickoff meeting, event ev-31?", [WHO]),
    ("Scrap the Thursday retro, nobody can make it", [DELETE]),
    ("Pencil in a haircut for Saturday at 10am", [CREATE]),
    ("How busy am I tomorrow?", [LIST]),
    ("Let's hold the weekly sync at 10 instead of 9 from now on", [UPDATE]),
    ("Put mum's birthday on June 3rd in my calendar", [CREATE]),
    ("List everything I've got between Monday and Wednesday", [LIST]),
    ("I can't make the 4pm interview, cancel it", [DELETE]),
    ("Find 30 minutes on Thursday when the whole team is free and send everyone an invite", [FREE, CREATE]),
]
write("etom-calendar-2.jsonl", "CM", Q)
