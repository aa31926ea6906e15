# Writes etom-reminders-2.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28
# (twelfth round) after the reminder reading (registry/src/routing/reminder.rs) was built on the
# first reminder set, and committed before it was measured: other words for asking to be
# reminded. Group as in make_reminders.py.
from catalog_groups import TODO_ADD as ADD
from set_writer import write
Q = [
    ("Remind me on Tuesday to follow up with the recruiter", [ADD]),
    ("Could you remind me at 5pm to leave for the airport?", [ADD]),
    ("Tomorrow morning, remind me to bring the charger", [ADD]),
    ("Set me a reminder for the 15th: pay rent", [ADD]),
    ("Please create a reminder to renew the car registration in March", [ADD]),
    ("I'll forget otherwise, so remind me tonight to lock the garage", [ADD]),
    ("Buzz me on Monday about the dentist forms", [ADD]),
    ("Make sure I don't forget the team photo on Friday", [ADD]),
    ("Add a reminder: order printer ink next week", [ADD]),
    ("Note to self, email the landlord about the lease on Thursday", [ADD]),
]
write("etom-reminders-2.jsonl", "RN", Q)
