//! The index's unit tests: fusion, filtering, split requests and their provider, action and
//! name rules, incremental changes.

use super::*;

fn doc(upstream: &str, name: &str, text: &str) -> ToolDoc {
    ToolDoc {
        upstream: upstream.into(),
        name: name.into(),
        text: text.into(),
        gist: text.into(),
        hash: super::super::text_hash(text),
    }
}

fn axis(i: usize) -> Vec<f32> {
    let mut v = vec![0.0; 4];
    v[i] = 1.0;
    v
}

fn index() -> ToolIndex {
    let mut ix = ToolIndex::default();
    for (i, (name, text)) in [
        ("git_status", "git status. Shows the working tree status"),
        ("read_file", "read file. Reads a file from disk"),
        ("fetch", "fetch. Fetches a URL from the internet"),
    ]
    .into_iter()
    .enumerate()
    {
        let d = doc("s", name, text);
        let h = d.hash.clone();
        ix.upsert(d);
        ix.set_vector("s", name, &h, axis(i));
    }
    ix
}

#[test]
fn fuses_both_rankings_and_filters_before_ranking() {
    let ix = index();
    let all = |_: &ToolDoc| true;
    let f = Fusion::default();
    // Lexically "file" and semantically axis 2 (fetch): both appear, the one both agree on
    // first when they agree.
    let hits = ix.search("read a file", Some(&axis(1)), 3, Method::Hybrid, &f, &all);
    assert_eq!(hits[0].name, "read_file");
    assert_eq!(hits[0].semantic_rank, Some(1));
    assert_eq!(hits[0].lexical_rank, Some(1));
    let no_fetch = |d: &ToolDoc| d.name != "read_file";
    let hits = ix.search(
        "read a file",
        Some(&axis(1)),
        3,
        Method::Hybrid,
        &f,
        &no_fetch,
    );
    assert!(hits.iter().all(|h| h.name != "read_file"));
    let sem = ix.search("zzz", Some(&axis(2)), 1, Method::Semantic, &f, &all);
    assert_eq!(sem[0].name, "fetch");
    // No vector: hybrid falls back to words.
    let lex = ix.search("working tree", None, 2, Method::Hybrid, &f, &all);
    assert_eq!(lex[0].name, "git_status");
}

#[test]
fn every_step_of_a_split_request_gets_its_best_tool() {
    let ix = index();
    let all = |_: &ToolDoc| true;
    let f = Fusion::default();
    // The whole request points at git status; its steps at reading a file and fetching.
    let whole = [0.9, 0.1, 0.1, 0.0];
    let steps = vec![
        ("read the file".to_string(), Some(axis(1))),
        ("fetch the page".to_string(), Some(axis(2))),
    ];
    let hits = ix.search_steps("zzz", Some(&whole), &steps, 3, Method::Semantic, &f, &all);
    let names: Vec<(&str, Option<usize>)> =
        hits.iter().map(|h| (h.name.as_str(), h.step)).collect();
    assert_eq!(names.len(), 3);
    assert_eq!(names[0], ("git_status", None));
    assert!(names.contains(&("read_file", Some(0))), "{names:?}");
    assert!(names.contains(&("fetch", Some(1))), "{names:?}");
    // A tool the whole request places first and a step finds too serves that step.
    let whole = [0.1, 0.9, 0.1, 0.0];
    let hits = ix.search_steps("zzz", Some(&whole), &steps, 3, Method::Semantic, &f, &all);
    assert_eq!(
        (hits[0].name.as_str(), hits[0].step),
        ("read_file", Some(0))
    );
    // A one-step request is an ordinary search.
    let one = ix.search_steps("zzz", Some(&axis(2)), &[], 1, Method::Semantic, &f, &all);
    assert_eq!((one[0].name.as_str(), one[0].step), ("fetch", None));
}

#[test]
fn a_request_of_one_need_weighs_bm25_by_its_own_weight() {
    let ix = index();
    let all = |_: &ToolDoc| true;
    // The words say read_file; the vector says fetch (0.8) over read_file (0.6).
    let v = [0.0, 0.6, 0.8, 0.0];
    let first = |single: f32, lexical: f32| {
        let f = Fusion {
            single_need_lexical_weight: single,
            lexical_weight: lexical,
            ..Fusion::default()
        };
        let hits = ix.search_steps("read a file", Some(&v), &[], 1, Method::Hybrid, &f, &all);
        hits[0].name.clone()
    };
    // 0.75 + 0.5 against 1.0: the words win; 0.75 + 0.2 against 1.0: the meaning does.
    assert_eq!(first(0.5, 0.2), "read_file");
    assert_eq!(first(0.2, 0.5), "fetch");
}

#[test]
fn a_step_that_names_its_upstream_gets_that_upstreams_tool_first() {
    let mut ix = ToolIndex::default();
    let tools = [
        ("finance", "top_companies", "lists the top investors"),
        ("finance", "funds", "lists the top funds"),
        ("Memgraph", "run_query", "runs a graph query"),
        ("Readwise", "highlights", "lists your highlights"),
    ];
    // Close to the investors' step: the finance tools, Memgraph's a little less; Readwise's
    // not at all.
    let vectors = [
        [1.0, 0.0, 0.0, 0.0],
        [0.9, 0.1, 0.0, 0.0],
        [0.8, 0.6, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
    ];
    for ((up, name, text), v) in tools.into_iter().zip(vectors) {
        let d = doc(up, name, text);
        let h = d.hash.clone();
        ix.upsert(d);
        ix.set_vector(up, name, &h, v.to_vec());
    }
    let all = |_: &ToolDoc| true;
    let f = Fusion::default();
    let search = |ix: &ToolIndex, step: &str| {
        let steps = vec![
            ("zzz".to_string(), Some(axis(2))),
            (step.to_string(), Some(axis(0))),
        ];
        let hits = ix.search_steps("zzz", Some(&axis(2)), &steps, 4, Method::Semantic, &f, &all);
        hits.iter()
            .find(|h| h.step == Some(1))
            .map(|h| h.name.clone())
    };
    // The step's words point at the investors; the product it names has the tool it means.
    assert_eq!(
        search(
            &ix,
            "then query our Memgraph database for the top investors"
        )
        .as_deref(),
        Some("run_query")
    );
    assert_eq!(
        search(&ix, "then query our database for the top investors").as_deref(),
        Some("top_companies")
    );
    // Named as a source whose tools fit the step far less than its best: no target.
    assert_eq!(
        search(&ix, "based on the Readwise notes, list the top investors").as_deref(),
        Some("top_companies")
    );
    // The names follow the catalog: without Memgraph's tool, nobody is named.
    ix.remove("Memgraph", "run_query");
    assert_eq!(
        search(
            &ix,
            "then query our Memgraph database for the top investors"
        )
        .as_deref(),
        Some("top_companies")
    );
}

#[test]
fn a_step_that_names_no_provider_keeps_to_the_requests_one() {
    // Two products with a `get_details` each; the request is about the firewall.
    let mut ix = ToolIndex::default();
    let tools = [
        ("firewall", "create_vlan", [1.0, 0.0, 0.0, 0.0]),
        ("firewall", "get_vlan", [0.3, 0.0, 0.95, 0.0]),
        ("game", "get_file_details", [0.0, 0.0, 1.0, 0.0]),
        ("notes", "write_note", [0.0, 0.0, 0.0, 1.0]),
    ];
    for (upstream, name, v) in tools {
        let d = doc(upstream, name, name);
        let h = d.hash.clone();
        ix.upsert(d);
        ix.set_vector(upstream, name, &h, v.to_vec());
    }
    let all = |_: &ToolDoc| true;
    let whole = [1.0, 0.0, 0.2, 0.1];
    let steps = vec![
        ("create a vlan".to_string(), Some(vec![1.0, 0.0, 0.0, 0.0])),
        (
            "then retrieve its details".to_string(),
            Some(vec![0.0, 0.0, 1.0, 0.0]),
        ),
        (
            "and save them as a note".to_string(),
            Some(vec![0.0, 0.0, 0.0, 1.0]),
        ),
    ];
    let found = |f: &Fusion| {
        let hits = ix.search_steps("zzz", Some(&whole), &steps, 4, Method::Semantic, f, &all);
        hits.into_iter()
            .map(|h| (h.name, h.step))
            .collect::<Vec<_>>()
    };
    let on = found(&Fusion::default());
    assert!(on.contains(&("get_vlan".into(), Some(1))), "{on:?}");
    // A step whose own tool is far better keeps it: the note tool of another upstream.
    assert!(on.contains(&("write_note".into(), Some(2))), "{on:?}");
    // Each step alone: the other product's tool wins the step.
    let off = found(&Fusion {
        provider_weight: 0.0,
        ..Fusion::default()
    });
    assert!(
        off.contains(&("get_file_details".into(), Some(1))),
        "{off:?}"
    );
}

#[test]
fn a_steps_later_candidates_keep_to_the_requests_providers() {
    let hit = |upstream: &str, name: &str, score: f32| Hit {
        upstream: upstream.into(),
        name: name.into(),
        score,
        similarity: Some(score),
        semantic_rank: None,
        lexical_rank: None,
        step: None,
    };
    // "Add Alice and Bob to the knowledge graph, link them as colleagues".
    let ranked = vec![
        hit("graph", "create_entities", 1.0),
        hit("contacts", "link_contacts", 0.95),
        hit("graph", "create_relations", 0.9),
        hit("clock", "now", 0.5),
    ];
    let order = |providers: &[&str], weight: f32| {
        let mut hits = ranked.clone();
        let providers: HashSet<&str> = providers.iter().copied().collect();
        favour_providers(&mut hits, &providers, weight);
        hits.into_iter().map(|h| h.name).collect::<Vec<_>>()
    };
    // The rest of the request chose the graph: its tool comes next, the address book's after.
    assert_eq!(
        order(&["graph"], 0.2),
        [
            "create_entities",
            "create_relations",
            "link_contacts",
            "now"
        ]
    );
    // Every upstream chosen, or the weight 0: the step's own order.
    let own = [
        "create_entities",
        "link_contacts",
        "create_relations",
        "now",
    ];
    assert_eq!(order(&["graph", "contacts", "clock"], 0.2), own);
    assert_eq!(order(&["graph"], 0.0), own);
}

#[test]
fn a_changed_text_needs_a_new_vector_and_is_found_by_its_new_words() {
    let mut ix = index();
    assert!(ix.missing_vectors().is_empty());
    assert!(!ix.upsert(doc("s", "fetch", "fetch. Fetches a URL from the internet")));
    assert!(ix.upsert(doc("s", "fetch", "fetch. Downloads a web page as markdown")));
    assert_eq!(ix.missing_vectors().len(), 1);
    let all = |_: &ToolDoc| true;
    let f = Fusion::default();
    assert_eq!(
        ix.search("markdown", None, 1, Method::Lexical, &f, &all)[0].name,
        "fetch"
    );
    assert!(ix
        .search("internet", None, 1, Method::Lexical, &f, &all)
        .is_empty());
    // The tool waiting for its vector still has the text to embed.
    assert_eq!(
        ix.missing_vectors()[0].gist,
        "fetch. Downloads a web page as markdown"
    );
    assert!(ix.remove("s", "fetch"));
    assert_eq!(ix.len(), 2);
}

#[test]
fn a_changed_lexical_text_with_the_same_gist_keeps_its_vector() {
    let mut ix = index();
    let mut d = doc("s", "fetch", "fetch. Fetches a URL from the internet");
    d.text = "fetch. Fetches a URL from the internet, also known as wget".into();
    assert!(ix.upsert(d.clone()));
    assert!(!ix.upsert(d), "the same texts again change nothing");
    assert!(ix.missing_vectors().is_empty());
    let f = Fusion::default();
    assert_eq!(
        ix.search("wget", None, 1, Method::Lexical, &f, &|_| true)[0].name,
        "fetch"
    );
}
