# Writes etom-calendar-3.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28
# (twelfth round) after the calendar reading (registry/src/routing/calendar.rs) was widened on the
# second calendar set's misses, and committed before it was measured: again other words for the
# same asks, the check the second set no longer is. Groups as in make_calendar_2.py.
from set_writer import named, write
CREATE = named("Google Workspace MCP Server/create_event", "Outlook Meetings Scheduler MCP Server/create-event",
               "Outlook Meetings Scheduler MCP Server/create-event-with-attendees", "Outlook Calendar MCP Tool/create_event")
LIST = named("Google Workspace MCP Server/list_events", "Outlook Meetings Scheduler MCP Server/list-events",
             "Outlook Calendar MCP Tool/list_events", "DAV MCP Server/get_calendar_events")
FREE = LIST + named("Outlook Calendar MCP Tool/find_free_slots")
UPDATE = named("Google Workspace MCP Server/update_event", "Outlook Meetings Scheduler MCP Server/update-event",
               "Outlook Calendar MCP Tool/update_event")
ATTENDEES = named("Outlook Meetings Scheduler MCP Server/update-event-attendees", "Google Workspace MCP Server/update_event",
                  "Outlook Meetings Scheduler MCP Server/update-event")
# An invitation to a meeting that may or may not exist yet: made with its attendees, or added to.
INVITE = CREATE + ATTENDEES
DELETE = named("Google Workspace MCP Server/delete_event", "Google MCP Tools/google_calendar_delete_event",
               "Outlook Meetings Scheduler MCP Server/delete-event", "Outlook Calendar MCP Tool/delete_event")
WHO = named("Outlook Calendar MCP Tool/get_attendee_status", "Outlook Meetings Scheduler MCP Server/get-event")
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
