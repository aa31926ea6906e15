# The calendar groups of the ETOM catalog that our calendar sets use (README.md, "One's calendar in
# everyday words"): every calendar tool of the catalog's calendar servers (Google Workspace, Google
# Tools, the two Outlook servers, DAV) that does the step.
from set_writer import named
CREATE = named("Google Workspace MCP Server/create_event", "Outlook Meetings Scheduler MCP Server/create-event",
               "Outlook Meetings Scheduler MCP Server/create-event-with-attendees", "Outlook Calendar MCP Tool/create_event")
LIST = named("Google Workspace MCP Server/list_events", "Outlook Meetings Scheduler MCP Server/list-events",
             "Outlook Calendar MCP Tool/list_events", "DAV MCP Server/get_calendar_events")
# Whether one is free: the events of the time asked about, or the free slots in it.
FREE = LIST + named("Outlook Calendar MCP Tool/find_free_slots")
UPDATE = named("Google Workspace MCP Server/update_event", "Outlook Meetings Scheduler MCP Server/update-event",
               "Outlook Calendar MCP Tool/update_event")
# Who is invited: the tools that change an event's attendees.
ATTENDEES = named("Outlook Meetings Scheduler MCP Server/update-event-attendees", "Google Workspace MCP Server/update_event",
                  "Outlook Meetings Scheduler MCP Server/update-event")
# An invitation to a meeting that may or may not exist yet: made with its attendees, or added to.
INVITE = CREATE + ATTENDEES
DELETE = named("Google Workspace MCP Server/delete_event", "Google MCP Tools/google_calendar_delete_event",
               "Outlook Meetings Scheduler MCP Server/delete-event", "Outlook Calendar MCP Tool/delete_event")
CALENDARS = named("Google MCP Tools/google_calendar_list_calendars", "DAV MCP Server/get_my_calendars",
                  "Outlook Calendar MCP Tool/get_calendars")
ONE = named("Outlook Meetings Scheduler MCP Server/get-event")
WHO = named("Outlook Calendar MCP Tool/get_attendee_status", "Outlook Meetings Scheduler MCP Server/get-event")
