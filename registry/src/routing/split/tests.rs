//! The splitter's unit tests: where a request is cut into steps, and where it is not.

use super::*;

#[test]
fn a_search_without_k_has_room_for_every_step() {
    assert_eq!(answer_size(5, 50, 1), 5);
    assert_eq!(answer_size(5, 50, 3), 5);
    assert_eq!(answer_size(5, 50, 6), 7);
    assert_eq!(answer_size(5, 6, 8), 6);
    assert_eq!(answer_size(10, 50, 6), 10);
}

#[test]
fn a_multi_step_request_becomes_its_steps() {
    let parts = split_request(
        "Fetch the article at https://example.com/a.html, convert it to markdown, and then \
         email it to research-team@example.com with the subject 'Trends v2.3'. Thanks!",
    );
    assert_eq!(
        parts,
        [
            "Fetch the article at https://example.com/a.html",
            "convert it to markdown",
            "and then email it to research-team@example.com with the subject 'Trends v2.3'. \
             Thanks!",
        ]
    );
    let parts = split_request(
        "Could you first list the latest blocks, then find the token details; finally, \
         give me the average price of OSMO on Binance?",
    );
    assert_eq!(parts.len(), 3, "{parts:?}");
    assert!(parts[2].starts_with("finally"), "{parts:?}");
    // A marker followed by a comma cuts too.
    let parts = split_request(
        "Tell me the 5 most recent Osmosis blocks, then, find the token details for OSMO, \
         and finally, give me the average price of OSMO/USDT on Binance",
    );
    assert_eq!(
        parts,
        [
            "Tell me the 5 most recent Osmosis blocks",
            "then, find the token details for OSMO",
            "and finally, give me the average price of OSMO/USDT on Binance",
        ]
    );
}

#[test]
fn a_thing_to_make_named_first_is_cut_from_its_sourced_content() {
    assert_eq!(
        split_request("I need a slide deck on this week's trending GitHub developers"),
        [
            "I need a slide deck",
            "on this week's trending GitHub developers"
        ]
    );
    assert_eq!(
        split_request("Create a Jira ticket for the login bug"),
        ["Create a Jira ticket for the login bug"]
    );
    assert_eq!(
        split_request("Create a new note on HackMD with the title 'Weekly'"),
        ["Create a new note on HackMD with the title 'Weekly'"]
    );
}

#[test]
fn what_a_message_sends_from_a_source_is_its_own_step() {
    assert_eq!(
        split_request("Text +1 555 0142 the hottest post on r/wallstreetbets"),
        ["Text +1 555 0142", "the hottest post on r/wallstreetbets"]
    );
    assert_eq!(
        split_request("Email the markdown of https://example.com/guide to me@example.com"),
        [
            "Email to me@example.com",
            "the markdown of https://example.com/guide"
        ]
    );
    assert_eq!(
        split_request("Email Omar the Linear issues assigned to him"),
        ["Email Omar", "the Linear issues assigned to him"]
    );
    assert_eq!(
        split_request("Email the agenda to bob@example.com"),
        ["Email the agenda to bob@example.com"]
    );
}

#[test]
fn what_someone_saved_is_no_step_of_saving() {
    assert_eq!(
        split_request("Show me what I saved in Bear about sourdough"),
        ["Show me what I saved in Bear about sourdough"]
    );
}

#[test]
fn a_minor_step_after_and_or_a_saving_phrase_is_a_step() {
    assert_eq!(
        split_request(
            "Make a web page about the history of AI based on Wikipedia saved at /root/html/ai.html"
        ),
        [
            "Make a web page",
            "about the history of AI based on Wikipedia",
            "saved at /root/html/ai.html"
        ]
    );
    assert_eq!(
        split_request("Analyze Apple's stock over the last month and summarize it in a PPT"),
        [
            "Analyze Apple's stock over the last month",
            "and summarize it in a PPT"
        ]
    );
    assert_eq!(
        split_request("Search arXiv for papers about diffusion and mail the titles to Bob"),
        [
            "Search arXiv for papers about diffusion",
            "and mail the titles to Bob"
        ]
    );
    // One action on two objects, or a verb that is no action of its own, stays whole.
    assert_eq!(
        split_request("find and compare flights from Boston to Rome"),
        ["find and compare flights from Boston to Rome"]
    );
    assert_eq!(
        split_request("show the issues labelled bug and assigned to me"),
        ["show the issues labelled bug and assigned to me"]
    );
    // Putting, keeping or turning what was found into a document is a step of its own.
    assert_eq!(
        split_request("Find the Datadog metrics for the API and keep them in a HackMD note"),
        [
            "Find the Datadog metrics for the API",
            "and keep them in a HackMD note"
        ]
    );
    assert_eq!(
        split_request("Read the latest article on staking and turn it into a short PowerPoint"),
        [
            "Read the latest article on staking",
            "and turn it into a short PowerPoint"
        ]
    );
}

#[test]
fn a_file_named_to_put_the_result_in_is_a_step() {
    assert_eq!(
        split_request(
            "Pull the fundamentals of Samsung Electronics from the KOSPI server into \
             ~/kospi/samsung.csv"
        ),
        [
            "Pull the fundamentals of Samsung Electronics from the KOSPI server",
            "into ~/kospi/samsung.csv"
        ]
    );
    assert_eq!(
        split_request("Yahoo Finance news for NVDA in a text file at /home/me/news.txt"),
        [
            "Yahoo Finance news for NVDA",
            "in a text file at /home/me/news.txt"
        ]
    );
    // A verb of keeping that opens the request: what it keeps must be found first.
    assert_eq!(
        split_request("Stash the WeatherXM forecast for cell 871f in /var/tmp/f.json"),
        [
            "Stash the WeatherXM forecast for cell 871f",
            "in /var/tmp/f.json"
        ]
    );
    assert_eq!(
        split_request("List the Jira projects we have, output to /tmp/projects.txt"),
        [
            "List the Jira projects we have, output",
            "to /tmp/projects.txt"
        ]
    );
    // A later part that keeps is the step of saving already, also after a comma.
    assert_eq!(
        split_request("Get the forecast for Oslo, store the daily numbers in /root/oslo.json"),
        [
            "Get the forecast for Oslo",
            "store the daily numbers in /root/oslo.json"
        ]
    );
    assert_eq!(
        split_request(
            "Search GitHub for trending Rust repositories and write their names to /root/rust.md"
        ),
        [
            "Search GitHub for trending Rust repositories",
            "and write their names to /root/rust.md"
        ]
    );
    for whole in [
        // The destination is the verb's own, or where the file acted on is.
        "Move /root/drafts/report.md to /root/final/report.md",
        "Copy the nginx configuration to /root/backup/nginx.conf",
        "Download https://example.com/changelog to /root/changelog.html",
        "Transcribe the interview recording at ~/audio/interview.mp3",
        "Summarize the error log in /var/log/app/errors.log",
        // Too few words before it for a step of its own.
        "I want them in /srv/reports/quotes.json",
        // What a writing verb writes is given: one need.
        "Write a haiku about autumn to /tmp/haiku.txt",
        "Append the log line to /var/log/app.log",
    ] {
        assert_eq!(split_request(whole), [whole], "{whole}");
    }
}

#[test]
fn a_thing_to_make_is_a_step() {
    assert_eq!(
        split_request("Summarize the three newest arXiv papers on diffusion as a PDF report."),
        [
            "Summarize the three newest arXiv papers on diffusion",
            "as a PDF report."
        ]
    );
    assert_eq!(
        split_request("Put the latest NVIDIA headlines from Yahoo Finance into an Excel sheet."),
        [
            "Put the latest NVIDIA headlines from Yahoo Finance",
            "into an Excel sheet."
        ]
    );
    // A later part that keeps is the step of making already.
    assert_eq!(
        split_request("Find the open bugs in project WEB and then save them as a PDF report"),
        [
            "Find the open bugs in project WEB",
            "and then save them as a PDF report"
        ]
    );
    for whole in [
        // Converting and writing make the thing themselves.
        "Convert the contract at /docs/contract.pdf into a Word document",
        "Turn the tables in /docs/q3-report.pdf into a spreadsheet",
        "Write a short summary of the meeting as a HackMD note",
        // Where the content is, not what is made.
        "Find the errors in the quarterly report",
        "Read the latest comments on the Trello card",
        // Too few words before it.
        "Show it as a chart",
    ] {
        assert_eq!(split_request(whole), [whole], "{whole}");
    }
}

#[test]
fn a_dash_before_an_action_is_a_link() {
    assert_eq!(
        split_request("Weather at JFK airport tomorrow — text it to my wife at +1 555 0100."),
        [
            "Weather at JFK airport tomorrow",
            "text it to my wife at +1 555 0100."
        ]
    );
    assert_eq!(
        split_request("The latest Bitcoin price - email it to me@example.com"),
        ["The latest Bitcoin price", "email it to me@example.com"]
    );
    // A dash before no action is punctuation.
    let whole = "Book the flight for 2 - 3 people next week";
    assert_eq!(split_request(whole), [whole]);
}

#[test]
fn remembering_what_was_found_is_a_step() {
    assert_eq!(
        split_request("Read config.yaml and remember the database host it names"),
        [
            "Read config.yaml",
            "and remember the database host it names"
        ]
    );
}

#[test]
fn a_command_to_run_is_a_step() {
    assert_eq!(
        split_request("Show how much disk space is free on / using the df -h command"),
        [
            "Show how much disk space is free on /",
            "using the df -h command"
        ]
    );
    assert_eq!(
        split_request("Kill whatever process holds port 3000, via the kill command"),
        [
            "Kill whatever process holds port 3000",
            "via the kill command"
        ]
    );
    // A backticked command after "with": its backticks are masked while the request is cut.
    assert_eq!(
        split_request("List the running containers on this host with `docker ps`"),
        [
            "List the running containers on this host",
            "with `docker ps`"
        ]
    );
    // What the command is for, after it.
    assert_eq!(
        split_request("Use the command `pip list --outdated` to see which packages are old"),
        [
            "Use the command `pip list --outdated`",
            "to see which packages are old"
        ]
    );
    // Little more than the phrase: the part is the step.
    assert_eq!(
        split_request("Check it with the lsof command."),
        ["Check it with the lsof command."]
    );
    // A backticked value after "with" that is no command.
    assert_eq!(
        split_request("List all files with the `.txt` extension in the docs folder"),
        ["List all files with the `.txt` extension in the docs folder"]
    );
}

#[test]
fn actions_listed_with_commas_are_steps() {
    assert_eq!(
        split_request(
            "Start a scan on 192.168.1.100 and then retrieve its detailed results, check its \
             status, list all scans, and finally list the scan templates."
        ),
        [
            "Start a scan on 192.168.1.100",
            "and then retrieve its detailed results",
            "check its status",
            "list all scans",
            "and finally list the scan templates.",
        ]
    );
    // The verbs of the actions tools do count too ("verify", "look up").
    assert_eq!(
        split_request(
            "Search NPM for react, identify known vulnerabilities, look up the licences."
        ),
        [
            "Search NPM for react",
            "identify known vulnerabilities",
            "look up the licences."
        ]
    );
    // Nouns in a list, a clause of condition, a piece that asks for nothing: no cut.
    for whole in [
        "Discover available image models, text models, and audio voices on the server",
        "Show the system information, list of datasets, and pool status of the NAS",
        "Show the build, query results, and test view of the last run",
        "If the abstract passes a strict security check, read the full paper",
        "For each paper found on arXiv, extract the abstract",
        "Based on the combined insights of these sources, generate three images",
    ] {
        assert_eq!(split_request(whole), [whole], "{whole}");
    }
    // A comma inside a quoted value is no cut either.
    assert_eq!(
        split_request("Create a note titled 'Plans, add dates' in the vault"),
        ["Create a note titled 'Plans, add dates' in the vault"]
    );
}

#[test]
fn the_verbs_are_sorted() {
    assert!(ACTION_VERBS.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_numbered_list_is_its_items() {
    assert_eq!(
        split_request(
            "Please help me with the following steps: 1. Retrieve recent news about solar \
             projects in Hamburg.\n2) Summarize the news of the top 5. Then make a chart of \
             203.0.113.45. 3. \
             Create a PowerPoint presentation named 'Energy' with 12 slides."
        ),
        [
            "Please help me with the following steps: Retrieve recent news about solar \
             projects in Hamburg.",
            "Summarize the news of the top 5.",
            "Then make a chart of 203.0.113.45.",
            "Create a PowerPoint presentation named 'Energy' with 12 slides."
        ]
    );
}

#[test]
fn a_list_written_on_one_line_or_with_bullets_is_its_items() {
    // Numbered in order inside a sentence: "2)" after a word is the next item, "5." after
    // "top" is not.
    assert_eq!(
        split_request(
            "1) get the weather in Berlin 2) convert it to Fahrenheit 3) send it to \
             alice@example.com"
        ),
        [
            "get the weather in Berlin",
            "convert it to Fahrenheit",
            "send it to alice@example.com"
        ]
    );
    assert_eq!(
        split_request(
            "Step 1: search arXiv for papers on retrieval augmented generation. Step 2: \
             download the top three PDFs. Step 3: write a short summary of each to \
             /root/rag/summary.md"
        ),
        [
            "search arXiv for papers on retrieval augmented generation.",
            "download the top three PDFs.",
            "write a short summary of each to /root/rag/summary.md"
        ]
    );
    assert_eq!(
        split_request("Show me the 2) cheapest flights from Paris to Tokyo next Friday"),
        ["Show me the 2) cheapest flights from Paris to Tokyo next Friday"]
    );
    // Bullets: the mark is no word of the step, and a short item that asks for an action
    // is a step of its own.
    assert_eq!(
        split_request(
            "Please do the following:\n- find the latest release of tokio on GitHub\n- \
             summarize its changelog\n- notify the team"
        ),
        [
            "Please do the following: find the latest release of tokio on GitHub",
            "summarize its changelog",
            "notify the team"
        ]
    );
    // A chain of arrows between actions; an arrow before a file is a destination.
    assert_eq!(
        split_request(
            "Grab the top 10 Hacker News stories → summarize each → email the digest to \
             me@example.com"
        ),
        [
            "Grab the top 10 Hacker News stories",
            "summarize each",
            "email the digest to me@example.com"
        ]
    );
    assert_eq!(
        split_request("Trending GitHub developers this week -> /root/trending/devs.json"),
        [
            "Trending GitHub developers this week",
            "-> /root/trending/devs.json"
        ]
    );
}

#[test]
fn what_a_colon_announces_belongs_to_its_part() {
    assert_eq!(
        split_request(
            "Please run this SQL query on the sales database:\nSELECT month, SUM(total) \
             FROM sales GROUP BY month\nThen draw a bar chart of the totals."
        ),
        [
            "Please run this SQL query on the sales database: SELECT month, SUM(total) \
             FROM sales GROUP BY month",
            "Then draw a bar chart of the totals."
        ]
    );
}

#[test]
fn an_abbreviation_ends_no_sentence() {
    assert_eq!(
        split_request(
            "Send the new paper to our lead scientist, Dr. Evelyn Reed, for review. Then \
             book a call with John F. Kennedy about Apple Inc. stock."
        ),
        [
            "Send the new paper to our lead scientist, Dr. Evelyn Reed, for review.",
            "Then book a call with John F. Kennedy about Apple Inc. stock."
        ]
    );
}

#[test]
fn a_single_request_stays_whole() {
    assert_eq!(
        split_request("show me the contents of config.yaml"),
        ["show me the contents of config.yaml"]
    );
    // Short sentences and phrases are not steps: they stay with their neighbour.
    assert_eq!(
        split_request("Read the file notes.txt for me. Thanks a lot!"),
        ["Read the file notes.txt for me. Thanks a lot!"]
    );
    assert_eq!(
        split_request("Get the weather for Paris and then next week's forecast too"),
        [
            "Get the weather for Paris",
            "and then next week's forecast too"
        ]
    );
}

#[test]
fn a_quoted_value_is_never_cut() {
    assert_eq!(
        split_request(
            "Create a note named 'Meeting Minutes' with the content 'Attendees: John, Jane, \
             Bob. Minutes: we discussed the timeline.' and then retrieve its content."
        ),
        [
            "Create a note named 'Meeting Minutes' with the content 'Attendees: John, Jane, \
             Bob. Minutes: we discussed the timeline.'",
            "and then retrieve its content."
        ]
    );
    assert_eq!(
        split_request("Post \"build, then deploy\" to the team channel, then archive the thread."),
        [
            "Post \"build, then deploy\" to the team channel",
            "then archive the thread."
        ]
    );
    // An apostrophe is no quote: "Bob's" opens nothing, and the cut stays.
    assert_eq!(
        split_request("Read Bob's latest message, then forward it to Alice's inbox."),
        [
            "Read Bob's latest message",
            "then forward it to Alice's inbox."
        ]
    );
}

#[test]
fn a_request_is_read_to_its_first_eight_kib_at_a_character_boundary() {
    assert_eq!(bounded_request("read a file"), "read a file");
    let long = "é".repeat(MAX_REQUEST_BYTES);
    let read = bounded_request(&long);
    assert_eq!(read.len(), MAX_REQUEST_BYTES);
    let odd = format!("a{long}");
    let read = bounded_request(&odd);
    assert_eq!(read.len(), MAX_REQUEST_BYTES - 1);
    assert!(read.ends_with('é'));
}

#[test]
fn a_call_for_help_with_the_other_parts_is_no_step() {
    let parts = split_request(
        "Could you help me with a few tasks? First, I need to convert 5000 Euros to US dollars. \
         Then, I need to plan a trip from New York to Los Angeles.",
    );
    assert_eq!(
        parts,
        [
            "First, I need to convert 5000 Euros to US dollars.",
            "Then, I need to plan a trip from New York to Los Angeles.",
        ]
    );
    // With one part left the request is one need, read whole.
    let one = "Can you help me with a few tasks? Convert 5000 Euros to US dollars.";
    assert_eq!(split_request(one), [one]);
}
