//! Everyday words read in the words tools use: the assistant's memory, to-dos, one's
//! calendar, reminders, notes, one's own files and folders, a shell command named.

use gateway_tests::{Gateway, RawClient};
use serde_json::{json, Value};

use super::{add_fixture_tools, tool_names};

/// The everyday readings, on the gateway `search_tools_then_call_tool_with_a_real_client`
/// started, after the step readings.
pub(super) async fn read_in_the_tools_words(gw: &Gateway) {
    let route = |body: Value| super::route(gw, body);
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    // A request to the assistant's memory in the words people use for their own: the memory
    // server's tool for it comes first (its texts speak of knowledge graphs and observations,
    // and the model read these by their other words: none of them was first).
    for (query, tools) in [
        (
            "forget everything you know about Carol",
            &["memory__delete_entities", "memory__delete_observations"][..],
        ),
        (
            "what do you remember about Alice?",
            &["memory__search_nodes", "memory__open_nodes"][..],
        ),
        (
            "remember that Alice speaks French",
            &["memory__add_observations", "memory__create_entities"][..],
        ),
    ] {
        let (_, r) = route(json!({"query": query, "k": 3})).await;
        let first = r["tools"][0]["name"].as_str().unwrap_or_default();
        assert!(tools.contains(&first), "{query:?} → {first}: {r}");
    }

    // "… and remember …" is a step of its own, even after a short first step: the time and
    // the memory each get their tool (it was one part, whose first tools were the memory's).
    let (_, r) = route(json!({"query": "Get Tokyo's time and remember it as the \
        meeting time", "k": 4}))
    .await;
    assert_eq!(
        r["steps"],
        json!(["Get Tokyo's time", "and remember it as the meeting time"]),
        "{r}"
    );
    let names = tool_names(&r["tools"]);
    assert!(
        names.iter().any(|n| n == "time__get_current_time")
            && names
                .iter()
                .any(|n| n == "memory__add_observations" || n == "memory__create_entities"),
        "the time's tool and the memory's: {r}"
    );

    // "to-dos" is read as tools spell it: "todos" (BM25 had dropped "to-do" as two common
    // words, and the model read "to-dos" as other words).
    add_fixture_tools(
        gw,
        &mut c,
        &[
            (
                "list_users",
                "List the open user accounts and their details.",
            ),
            ("list_todos", "Retrieve all todo items with their status."),
        ],
        "retrieve all todo items",
    )
    .await;
    let (_, r) = route(json!({"query": "Show me my open to-dos", "k": 1})).await;
    assert_eq!(tool_names(&r["tools"]), ["fx__list_todos"], "{r}");

    // One's calendar in everyday words is read in the words calendar tools use ("Schedule a
    // calendar event: …"): a call, a team, a phone tool came first before.
    add_fixture_tools(
        gw,
        &mut c,
        &[
            (
                "start_call",
                "Start a phone call to a number and speak a message.",
            ),
            (
                "list_teams",
                "List the teams of the organisation and their members.",
            ),
            ("delete_event", "Remove a calendar event by its event ID."),
            (
                "list_events",
                "Retrieve calendar events within a time range.",
            ),
            (
                "create_event",
                "Schedule a new calendar event with title, start and end times and attendees.",
            ),
        ],
        "schedule a new calendar event with title and attendees",
    )
    .await;
    for (query, tool) in [
        (
            "Book a 30-minute call with dana@example.com on Thursday at 10",
            "fx__create_event",
        ),
        ("Am I free on Friday afternoon?", "fx__list_events"),
        ("Can we cancel tomorrow's team huddle?", "fx__delete_event"),
    ] {
        let (_, r) = route(json!({"query": query, "k": 1})).await;
        assert_eq!(tool_names(&r["tools"]), [tool], "{query}: {r}");
    }

    // A request to be reminded is read as a to-do with a reminder: the invoice sender came
    // first for "nudge me on Friday to send the invoices".
    add_fixture_tools(
        gw,
        &mut c,
        &[
            ("send_invoice", "Send an invoice to a client by email."),
            (
                "create_todo",
                "Create a todo task with a title, a due date and a reminder.",
            ),
        ],
        "create a todo task with a title and a due date",
    )
    .await;
    let (_, r) = route(json!({"query": "Nudge me on Friday to send the invoices", "k": 1})).await;
    assert_eq!(tool_names(&r["tools"]), ["fx__create_todo"], "{r}");

    // Putting something in one's notes is read as making a note: a password store, a mind map
    // and a log reader came first for these.
    add_fixture_tools(
        gw,
        &mut c,
        &[
            ("get_password", "Retrieve a stored password by its name."),
            (
                "markdown_to_mindmap",
                "Turn an idea outline in markdown into an interactive mind map.",
            ),
            ("get_logs", "Retrieve application logs for a time range."),
            (
                "create_note",
                "Create and save a new note with a title and content.",
            ),
        ],
        "create and save a new note with a title",
    )
    .await;
    for query in [
        "Jot down: the wifi password at the cabin is 'pinecone42'",
        "Stash this idea somewhere: a podcast about old maps",
        "Log today's reading: finished chapter 4 of Dune",
    ] {
        let (_, r) = route(json!({"query": query, "k": 1})).await;
        assert_eq!(tool_names(&r["tools"]), ["fx__create_note"], "{query}: {r}");
    }
    // A file acted on as a whole is read after the operation, not the file's kind: a sheet copier
    // and a log reader came first for these.
    add_fixture_tools(
        gw,
        &mut c,
        &[
            (
                "excel_copy_sheet",
                "Duplicate a sheet within an Excel file by source and destination sheet names.",
            ),
            ("delete_file", "Delete a file or directory at a path."),
            (
                "copy_items",
                "Copy files or directories from source paths to destination paths.",
            ),
        ],
        "copy files or directories from source paths to destination paths",
    )
    .await;
    for (query, tool) in [
        (
            "Make a copy of budget.xlsx before I edit it",
            "fx__copy_items",
        ),
        (
            "Get rid of the old log file at /tmp/app.log",
            "fx__delete_file",
        ),
    ] {
        let (_, r) = route(json!({"query": query, "k": 1})).await;
        assert_eq!(tool_names(&r["tools"]), [tool], "{query}: {r}");
    }
    // What a folder holds is a listing of it: a backup reader came first for this.
    add_fixture_tools(
        gw,
        &mut c,
        &[
            (
                "read_backup_manifest",
                "Read what is stored in a backup: its manifest, size and date.",
            ),
            (
                "list_directory",
                "List files and directories within a directory path.",
            ),
        ],
        "list files and directories within a directory path",
    )
    .await;
    let (_, r) =
        route(json!({"query": "What's stored under /srv/backups right now?", "k": 1})).await;
    assert_eq!(tool_names(&r["tools"]), ["fx__list_directory"], "{r}");
    // Looking something up in one's notes shares note-taking's verbs, and is read as a search of
    // them: "what did I jot down" is no new note.
    add_fixture_tools(
        gw,
        &mut c,
        &[(
            "search_notes",
            "Search notes by a query and read the notes found.",
        )],
        "search notes by a query and read them",
    )
    .await;
    for query in [
        "What did I jot down about the lease renewal?",
        "Find the idea I stashed about old maps",
    ] {
        let (_, r) = route(json!({"query": query, "k": 1})).await;
        assert_eq!(
            tool_names(&r["tools"]),
            ["fx__search_notes"],
            "{query}: {r}"
        );
    }

    // A phrase that names a shell command is a step of running it, which a tool that runs
    // commands serves: "using the date command" was no step, and the time tools took every
    // place.
    add_fixture_tools(
        gw,
        &mut c,
        &[(
            "run_command",
            "Run a shell command in a terminal and return what it prints.",
        )],
        "run a shell command in a terminal",
    )
    .await;
    let (_, r) = route(
        json!({"query": "Tell me the current time in Berlin, using the date \
        command", "k": 4}),
    )
    .await;
    assert_eq!(
        r["steps"],
        json!([
            "Tell me the current time in Berlin",
            "using the date command"
        ]),
        "{r}"
    );
    let names = tool_names(&r["tools"]);
    assert!(
        names.iter().any(|n| n == "fx__run_command")
            && names.iter().any(|n| n == "time__get_current_time"),
        "the command's runner and the time's tool: {r}"
    );
}
