//! The request readings' unit tests: what the model and BM25 read of a request.

use super::*;

#[test]
fn a_request_read_in_the_tools_words_is_told() {
    for text in [
        "remember that Alice speaks French",
        "How much is 394 times 213?",
        "Show how much disk space is free on / using the df -h command",
    ] {
        assert!(lexical_reading(text).1, "{text}");
    }
    for text in [
        "Find me the detailed profile of basketball player Lebron James",
        "what time is it in Tokyo right now",
    ] {
        assert!(!lexical_reading(text).1, "{text}");
    }
}

#[test]
fn bm25_gets_every_word_quoted_ones_at_half_weight_and_the_kinds_of_files() {
    let [(full, one), (quoted, half)] = lexical_query(
        "Rename 'Q3 Budget Final' to 'Archive', save it to /root/q3.xlsx and mail \
         'ana@x.org' the https://github.com/a page in a PPT",
    );
    assert_eq!((one, half), (1.0, 0.5));
    assert_eq!(
        full.split_whitespace().collect::<Vec<_>>().join(" "),
        "Rename to , save it to /root/q3.xlsx and mail the https://github.com/a page in a \
         PPT Excel file PowerPoint presentation email address send email"
    );
    assert_eq!(quoted, "Q3 Budget Final Archive ana@x.org");
    // Nothing quoted, no file: the request as it is.
    let [(full, _), (quoted, _)] = lexical_query("list my open issues");
    assert_eq!((full.trim(), quoted.as_str()), ("list my open issues", ""));
    // A noun of messaging used as a verb: the words it stands for that the request lacks.
    let [(full, _), _] = lexical_query("Get the forecast and text it to +1 555 0100");
    assert_eq!(
        full,
        "Get the forecast and text it to +1 555 0100 send message"
    );
    let [(full, _), _] = lexical_query("send the text to Bob");
    assert_eq!(full.trim(), "send the text to Bob");
}

#[test]
fn quoted_values_leave_the_request() {
    assert_eq!(
        semantic_query("Rename 'Q3 Budget Final' to \"Archive\", then tell Bob's team."),
        "Rename to , then tell Bob's team."
    );
    assert_eq!(
        semantic_query("save it as `notes` in \u{201c}my docs\u{201d}"),
        "save it as in"
    );
    // No closing quote, or nothing left: unchanged.
    assert_eq!(semantic_query("don't 'stop"), "don't 'stop");
    assert_eq!(semantic_query("'hello world'"), "'hello world'");
}

#[test]
fn to_do_is_spelled_as_tools_spell_it() {
    assert_eq!(
        semantic_query("Show me my open To-dos"),
        "Show me my open todos"
    );
    assert_eq!(spelled("a to-do: café"), "a todo: café");
}

#[test]
fn a_command_to_run_is_read_as_running_one() {
    assert_eq!(
        semantic_query("using the df -h command"),
        "run a command in the terminal (df -h)"
    );
    // A backticked command stays: it is no value to leave out.
    assert_eq!(
        semantic_query("then run `git status` in ~/work/api"),
        "then run a command in the terminal (git status) in file"
    );
    let [(words, _), _] = lexical_query("with `docker ps`");
    assert!(
        words.contains("run a command in the terminal (docker ps)"),
        "{words}"
    );
}

#[test]
fn email_as_a_verb_is_read_as_sending_one() {
    assert_eq!(
        semantic_query("List the open issues, then email them to the team lead"),
        "List the open issues, then send an email with them to the team lead"
    );
    assert_eq!(
        semantic_query("Email the agenda to the team"),
        "send an email with the agenda to the team"
    );
    assert_eq!(
        semantic_query("Get the AMD news and text me the headlines"),
        "Get the AMD news and send a text message to me the headlines"
    );
    assert_eq!(
        semantic_query("find the paper, then tweet its title"),
        "find the paper, then post a tweet with its title"
    );
    assert_eq!(
        semantic_query("Text Priya the address"),
        "send a text message to Priya the address"
    );
    assert_eq!(
        semantic_query("WhatsApp me the menu"),
        "send a WhatsApp message to me the menu"
    );
    assert_eq!(
        semantic_query("Text AI models compared"),
        "Text AI models compared"
    );
    // A noun stays a noun: after an article or a possessive, or before a noun.
    for request in [
        "Read my latest email and summarize it",
        "Find the email address of Bob",
        "Forward the email the bot sent yesterday",
        "and mail server logs",
        "extract the text from the image",
        "convert the speech to text and summarize it",
    ] {
        assert_eq!(semantic_query(request), request);
    }
}

#[test]
fn the_extensions_are_sorted() {
    assert!(FILE_EXTENSIONS.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_part_that_only_names_a_destination_asks_to_write_there() {
    assert_eq!(
        semantic_query("into ~/kospi/samsung.csv"),
        "write it into file"
    );
    assert_eq!(
        semantic_query("in a text file at /home/me/nvda-news.txt"),
        "write it in a text file at file"
    );
    // A later part that keeps: the saving of what was found.
    assert_eq!(
        semantic_query("and write the bundle ids to ios/apps.txt"),
        "write it to file"
    );
    assert_eq!(
        semantic_query("then send the results to /root/onboarding.txt"),
        "write it to file"
    );
    let [(bm25, _), _] = lexical_query("into /var/tmp/forecast.json");
    assert!(bm25.starts_with("write it into "), "{bm25}");
    // More than a destination, a request that opens with the keeping, or a file that is
    // what the request acts on: as written.
    assert_eq!(
        semantic_query("Pull the fundamentals into ~/kospi/samsung.csv"),
        "Pull the fundamentals into file"
    );
    assert_eq!(
        semantic_query("Dump the recent liquidations to ~/liq.json"),
        "Dump the recent liquidations to file"
    );
    // (A move of a file is read as one: files.rs.)
    assert_eq!(
        semantic_query("move /root/a.md to /root/b.md"),
        "Move or rename files or directories: move file to file"
    );
    assert_eq!(destination_at("move /root/a.md to /root/b.md"), None);
    assert_eq!(
        destination_at("Trending developers -> /root/devs.json"),
        Some(20)
    );
    assert_eq!(
        destination_at("the news in a new file at ~/n.md, please"),
        Some(9)
    );
    assert_eq!(destination_at("read ~/n.md"), None);
    assert_eq!(destination_at("send it to https://example.com/hook"), None);
}

#[test]
fn a_file_url_or_address_is_seen_as_its_kind() {
    assert_eq!(
        semantic_query("Get the forecast for JFK and save it to /home/ana/jfk-weather.md."),
        "Get the forecast for JFK and save it to file."
    );
    assert_eq!(
        semantic_query("stage README.md for commit"),
        "stage file for commit"
    );
    assert_eq!(
        semantic_query("write the names into deploy/apps.txt, then mail ops@example.com"),
        "write the names into file, then send an email to email address"
    );
    assert_eq!(
        semantic_query("save it as 'exhibition_artwork.txt' in C:\\Users\\me"),
        "save it as file in file"
    );
    assert_eq!(semantic_query("list \\\\server\\docs"), "list file");
    // A type that picks a tool stays; a text file is a file.
    assert_eq!(
        semantic_query("write the table into /root/excel/q3.xlsx and the notes to notes.md"),
        "write the table into Excel file and the notes to file"
    );
    assert_eq!(
        semantic_query("read contract.PDF, ~/a.pptx, x.docx, cat.png, talk.mp3 and demo.mp4"),
        "read PDF file, PowerPoint presentation, Word file, image file, audio file and video file"
    );
    assert_eq!(
        semantic_query("fetch (https://example.com/a.html) as markdown"),
        "fetch (web page) as markdown"
    );
    // A URL keeps its site: it names the provider.
    assert_eq!(
        semantic_query(
            "read https://www.reddit.com/r/rust/x, 'https://bbc.co.uk/news' and \
             http://10.0.0.7:8080/status"
        ),
        "read reddit web page, bbc web page and web page"
    );
    // Past user information and a port; an IPv6 address and a one-label host give no site.
    assert_eq!(
        semantic_query(
            "open https://ana:pw@GitHub.com:443/x, www.figma.com/file/1, http://[::1]:8080/                  and http://intranet/wiki"
        ),
        "open github web page, figma web page, web page and web page"
    );
    // A type's name alone names such a file, and stays; other capitals are left alone.
    assert_eq!(
        semantic_query("open this PNG screenshot, then summarize it in a PPT or a PDF."),
        "open this PNG image file screenshot, then summarize it in a PPT PowerPoint presentation or a \
         PDF file."
    );
    assert_eq!(
        semantic_query("send the API keys in JSON to the US team, OK? And list new ICO tokens"),
        "send the API keys in JSON to the US team, OK? And list new ICO tokens"
    );
    // Not files: a domain, a version, a framework, a repository, a fraction, "and/or".
    for same in [
        "open example.com in v2.3 e.g. now",
        "a Node.js app for owner/repo",
        "read and/or write 3/4 of it",
        "match \\d+ and split at \\n",
    ] {
        assert_eq!(semantic_query(same), same);
    }
}
