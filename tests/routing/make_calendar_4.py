# Writes etom-calendar-4.jsonl (tests/routing/README.md) from the requests below, checking that
# every tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28
# (twelfth round) after the calendar reading (registry/src/routing/calendar.rs) took its last
# form (a thing in one's calendar with its time, read on the third set's misses), and committed
# before it was measured: the check the third set no longer is. Groups as in make_calendar_2.py.
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
