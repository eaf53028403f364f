//! The `logs summary` report's two tables: the lists a summary counts into ([`LISTS`]:
//! what each holds and how two pieces' values merge, read by the summary, its fold and
//! the partial codec), and the panels the report shows ([`PANELS`]: id, title, where the
//! rows and each column come from, how the key is shown, when the panel is shown, read
//! by every renderer: text, JSON, CSV and the HTML page).
//!
//! Adding a panel over what the lists hold is adding an entry to [`PANELS`]; a panel over
//! a new field adds its lists to [`LISTS`] (and the version of docs/partial-format.md),
//! with the code in `logs::summary` that computes their keys from a request.

/// How two pieces' values of one key merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// Added (saturating): counts, bytes, times in all.
    Sum,
    /// The larger: a longest time, or a set's 1s.
    Max,
}

/// A list of a summary's state: keys and one number each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct List {
    /// Its name (what the tests and the design notes call it).
    pub name: &'static str,
    /// What the number of a key is.
    pub holds: &'static str,
    /// How two pieces' numbers of one key merge.
    pub merge: Merge,
}

/// Index of the clients among [`LISTS`] (and the summary's tables).
pub const T_CLIENTS: usize = 0;
/// Requests (`METHOD URI PROTOCOL`).
pub const T_REQUESTS: usize = 1;
/// 404s by request.
pub const T_NOT_FOUND: usize = 2;
/// Referrers.
pub const T_REFERRERS: usize = 3;
/// User agents.
pub const T_AGENTS: usize = 4;
/// Bytes by request.
pub const T_BYTES: usize = 5;
/// Visitors (`partial::visitor_key`): requests by visitor and hour.
pub const T_VISITORS: usize = 6;
/// Virtual hosts.
pub const T_VHOSTS: usize = 7;
/// Remote users.
pub const T_USERS: usize = 8;
/// Time taken by request (microseconds, in all; requests with a time only).
pub const T_TIME_SUM: usize = 9;
/// Longest time taken by request (merged by maximum).
pub const T_TIME_MAX: usize = 10;
/// Bytes by client.
pub const T_CLIENT_BYTES: usize = 11;
/// Bytes by referrer.
pub const T_REFERRER_BYTES: usize = 12;
/// Bytes by user agent.
pub const T_AGENT_BYTES: usize = 13;
/// Bytes by virtual host.
pub const T_VHOST_BYTES: usize = 14;
/// Bytes by remote user.
pub const T_USER_BYTES: usize = 15;
/// Requests by row of a panel and visitor (`summary::row_visitor_key`): the visitors of
/// each row of the requests, 404s, referrers, referring sites, virtual hosts and users.
pub const T_ROW_VISITORS: usize = 16;
/// Bytes sent by 404 request (the 404s' bytes: a request answered 404 is in the 404s
/// only, as in GoAccess).
pub const T_NOT_FOUND_BYTES: usize = 17;

/// The lists of a summary's state after its numbers and days, in the order of the
/// partial format (docs/partial-format.md): entry `T_*` is list `T_*`.
pub const LISTS: [List; 18] = [
    List {
        name: "clients",
        holds: "requests by client",
        merge: Merge::Sum,
    },
    List {
        name: "requests",
        holds: "requests by request (METHOD URI PROTOCOL)",
        merge: Merge::Sum,
    },
    List {
        name: "not_found",
        holds: "404s by request",
        merge: Merge::Sum,
    },
    List {
        name: "referrers",
        holds: "requests by referrer",
        merge: Merge::Sum,
    },
    List {
        name: "agents",
        holds: "requests by user agent",
        merge: Merge::Sum,
    },
    List {
        name: "request_bytes",
        holds: "bytes sent by request",
        merge: Merge::Sum,
    },
    List {
        name: "visitors",
        holds: "requests by visitor and hour",
        merge: Merge::Sum,
    },
    List {
        name: "vhosts",
        holds: "requests by virtual host",
        merge: Merge::Sum,
    },
    List {
        name: "users",
        holds: "requests by remote user",
        merge: Merge::Sum,
    },
    List {
        name: "time_sum",
        holds: "microseconds taken in all by request",
        merge: Merge::Sum,
    },
    List {
        name: "time_max",
        holds: "longest microseconds taken by request",
        merge: Merge::Max,
    },
    List {
        name: "client_bytes",
        holds: "bytes sent by client",
        merge: Merge::Sum,
    },
    List {
        name: "referrer_bytes",
        holds: "bytes sent by referrer",
        merge: Merge::Sum,
    },
    List {
        name: "agent_bytes",
        holds: "bytes sent by user agent",
        merge: Merge::Sum,
    },
    List {
        name: "vhost_bytes",
        holds: "bytes sent by virtual host",
        merge: Merge::Sum,
    },
    List {
        name: "user_bytes",
        holds: "bytes sent by remote user",
        merge: Merge::Sum,
    },
    List {
        name: "row_visitors",
        holds: "1 for each visitor of a row of a panel (a set)",
        merge: Merge::Max,
    },
    List {
        name: "not_found_bytes",
        holds: "bytes sent by 404 request",
        merge: Merge::Sum,
    },
];

/// The requested files' rows among the panels with visitors by row ([`T_ROW_VISITORS`]);
/// the static files are some of them.
pub const P_REQUESTS: usize = 0;
/// The 404s (a request answered 404 is in this panel only).
pub const P_NOT_FOUND: usize = 1;
/// The referrers.
pub const P_REFERRERS: usize = 2;
/// The referring sites (`summary::site`).
pub const P_SITES: usize = 3;
/// The virtual hosts.
pub const P_VHOSTS: usize = 4;
/// The remote users.
pub const P_USERS: usize = 5;
/// The status codes (the row: the code's three digits).
pub const P_STATUS: usize = 6;
/// How many panels have visitors by row in [`T_ROW_VISITORS`] (at most 8: 3 bits).
pub const ROW_PANELS: usize = 7;
const _: () = assert!(ROW_PANELS <= 8);

/// Index of the referring sites among the groups a fold makes from a list's keys.
pub const G_SITES: usize = 0;
/// Browsers.
pub const G_BROWSERS: usize = 1;
/// Browser versions.
pub const G_BROWSER_VERSIONS: usize = 2;
/// Operating systems.
pub const G_SYSTEMS: usize = 3;
/// Operating system versions.
pub const G_SYSTEM_VERSIONS: usize = 4;
/// Crawlers.
pub const G_CRAWLERS: usize = 5;

/// A group of a list's keys (sites of referrers, browsers of agents, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    /// Its name.
    pub name: &'static str,
    /// Whether the report keeps every row (few: families) rather than the top rows.
    pub every_row: bool,
}

/// The groups, entry `G_*` being group `G_*`.
pub const GROUPS: [Group; 6] = [
    Group {
        name: "referring_sites",
        every_row: false,
    },
    Group {
        name: "browsers",
        every_row: true,
    },
    Group {
        name: "browser_versions",
        every_row: false,
    },
    Group {
        name: "systems",
        every_row: true,
    },
    Group {
        name: "system_versions",
        every_row: false,
    },
    Group {
        name: "crawlers",
        every_row: false,
    },
];

/// Where a panel's ranked rows come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowsOf {
    /// The top rows of list `T_*`.
    List(usize),
    /// The top rows of group `G_*`.
    Group(usize),
    /// The static files among the requests.
    Statics,
}

/// Where the bytes of a panel's rows come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BytesOf {
    /// The bytes list `T_*` (of a list whose requests and bytes are kept together).
    List(usize),
    /// The bytes of group `G_*`.
    Group(usize),
}

/// Where the unique visitors of a panel's rows come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VisitorsOf {
    /// The row visitors of panel `P_*` ([`T_ROW_VISITORS`]).
    Rows(usize),
    /// The visitors of group `G_*`.
    Group(usize),
    /// The visitors of each client kept.
    Clients,
    /// The visitors of each user agent kept.
    Agents,
}

/// What a panel's rows are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// Ranked keys with their hits (and, when the entry names where they are, their
    /// unique visitors and bytes): the key a text column `key` (its id and title); the
    /// page charts the hits when `chart`.
    Keys {
        /// The key column's id and title.
        key: (&'static str, &'static str),
        /// The rows.
        rows: RowsOf,
        /// Their bytes (none: no bytes columns).
        bytes: Option<BytesOf>,
        /// Their visitors (none: no visitors columns).
        visitors: Option<VisitorsOf>,
        /// Whether the page draws the hits as a chart.
        chart: bool,
    },
    /// Ranked requests (`METHOD URI PROTOCOL`) shown as method, protocol and URI, with
    /// hits, the visitors of row panel `visitors` (`P_*`), bytes and, with `times` (when
    /// the log has them), times taken.
    Requests {
        /// The rows.
        rows: RowsOf,
        /// The row panel (`P_*`) of their visitors.
        visitors: usize,
        /// The list of their bytes by request (`T_BYTES`, `T_NOT_FOUND_BYTES`).
        bytes: usize,
        /// Whether the times taken are shown.
        times: bool,
    },
    /// Hits and unique visitors by day.
    Days,
    /// Unique visitors by day and hour.
    VisitorHours,
    /// Hits by hour of the day.
    Hours,
    /// Hits by HTTP status class.
    StatusClasses,
    /// Hits by HTTP status code.
    Statuses,
    /// Hits by response size (bucketed).
    Sizes,
    /// Hits by time taken (bucketed).
    Times,
}

/// When a panel is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Always.
    Always,
    /// When its rows are not none (the log names any).
    AnyRows,
    /// When the log spans less than two days (its days are one, or two in a row).
    UnderTwoDays,
    /// When the log gives the time taken of any request.
    Timed,
}

/// A panel of the report: every renderer (text, JSON, CSV, HTML) shows it, in this
/// order, when its [`When`] says; the page draws its chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panel {
    /// Its id (the JSON's, the CSV's first column, the page's anchor).
    pub id: &'static str,
    /// Its title.
    pub title: &'static str,
    /// Its rows.
    pub rows: Rows,
    /// When it is shown.
    pub when: When,
}

/// Shorthand for a panel of ranked keys.
const fn keys(
    key: (&'static str, &'static str),
    rows: RowsOf,
    bytes: BytesOf,
    visitors: VisitorsOf,
    chart: bool,
) -> Rows {
    Rows::Keys {
        key,
        rows,
        bytes: Some(bytes),
        visitors: Some(visitors),
        chart,
    }
}

/// The report's panels, in the order shown.
pub const PANELS: &[Panel] = &[
    Panel {
        id: "visitors",
        title: "Unique visitors per day",
        rows: Rows::Days,
        when: When::Always,
    },
    Panel {
        id: "visitors_by_hour",
        title: "Unique visitors per hour",
        rows: Rows::VisitorHours,
        when: When::UnderTwoDays,
    },
    Panel {
        id: "requests",
        title: "Requested files",
        rows: Rows::Requests {
            rows: RowsOf::List(T_REQUESTS),
            visitors: P_REQUESTS,
            bytes: T_BYTES,
            times: true,
        },
        when: When::Always,
    },
    Panel {
        id: "static",
        title: "Static files",
        rows: Rows::Requests {
            rows: RowsOf::Statics,
            visitors: P_REQUESTS,
            bytes: T_BYTES,
            times: true,
        },
        when: When::Always,
    },
    Panel {
        id: "not_found",
        title: "Not found (404)",
        rows: Rows::Requests {
            rows: RowsOf::List(T_NOT_FOUND),
            visitors: P_NOT_FOUND,
            bytes: T_NOT_FOUND_BYTES,
            times: false,
        },
        when: When::Always,
    },
    Panel {
        id: "hosts",
        title: "Visitor hosts",
        rows: keys(
            ("host", "Host"),
            RowsOf::List(T_CLIENTS),
            BytesOf::List(T_CLIENT_BYTES),
            VisitorsOf::Clients,
            true,
        ),
        when: When::Always,
    },
    Panel {
        id: "os",
        title: "Operating systems",
        rows: keys(
            ("os", "Operating system"),
            RowsOf::Group(G_SYSTEMS),
            BytesOf::Group(G_SYSTEMS),
            VisitorsOf::Group(G_SYSTEMS),
            true,
        ),
        when: When::Always,
    },
    Panel {
        id: "os_versions",
        title: "Operating system versions",
        rows: keys(
            ("os", "Operating system"),
            RowsOf::Group(G_SYSTEM_VERSIONS),
            BytesOf::Group(G_SYSTEM_VERSIONS),
            VisitorsOf::Group(G_SYSTEM_VERSIONS),
            false,
        ),
        when: When::Always,
    },
    Panel {
        id: "browsers",
        title: "Browsers",
        rows: keys(
            ("browser", "Browser"),
            RowsOf::Group(G_BROWSERS),
            BytesOf::Group(G_BROWSERS),
            VisitorsOf::Group(G_BROWSERS),
            true,
        ),
        when: When::Always,
    },
    Panel {
        id: "browser_versions",
        title: "Browser versions",
        rows: keys(
            ("browser", "Browser"),
            RowsOf::Group(G_BROWSER_VERSIONS),
            BytesOf::Group(G_BROWSER_VERSIONS),
            VisitorsOf::Group(G_BROWSER_VERSIONS),
            false,
        ),
        when: When::Always,
    },
    Panel {
        id: "crawlers",
        title: "Crawlers",
        rows: keys(
            ("crawler", "Crawler"),
            RowsOf::Group(G_CRAWLERS),
            BytesOf::Group(G_CRAWLERS),
            VisitorsOf::Group(G_CRAWLERS),
            false,
        ),
        when: When::Always,
    },
    Panel {
        id: "time",
        title: "Time distribution (hour of day)",
        rows: Rows::Hours,
        when: When::Always,
    },
    Panel {
        id: "referring_sites",
        title: "Referring sites",
        rows: keys(
            ("site", "Site"),
            RowsOf::Group(G_SITES),
            BytesOf::Group(G_SITES),
            VisitorsOf::Rows(P_SITES),
            false,
        ),
        when: When::Always,
    },
    Panel {
        id: "referrers",
        title: "Referrers",
        rows: keys(
            ("referrer", "Referrer"),
            RowsOf::List(T_REFERRERS),
            BytesOf::List(T_REFERRER_BYTES),
            VisitorsOf::Rows(P_REFERRERS),
            false,
        ),
        when: When::Always,
    },
    Panel {
        id: "status_classes",
        title: "HTTP status classes",
        rows: Rows::StatusClasses,
        when: When::Always,
    },
    Panel {
        id: "status",
        title: "HTTP status codes",
        rows: Rows::Statuses,
        when: When::Always,
    },
    Panel {
        id: "vhosts",
        title: "Virtual hosts",
        rows: keys(
            ("vhost", "Virtual host"),
            RowsOf::List(T_VHOSTS),
            BytesOf::List(T_VHOST_BYTES),
            VisitorsOf::Rows(P_VHOSTS),
            true,
        ),
        when: When::AnyRows,
    },
    Panel {
        id: "users",
        title: "Remote users",
        rows: keys(
            ("user", "User"),
            RowsOf::List(T_USERS),
            BytesOf::List(T_USER_BYTES),
            VisitorsOf::Rows(P_USERS),
            false,
        ),
        when: When::AnyRows,
    },
    Panel {
        id: "agents",
        title: "User agents",
        rows: keys(
            ("agent", "User agent"),
            RowsOf::List(T_AGENTS),
            BytesOf::List(T_AGENT_BYTES),
            VisitorsOf::Agents,
            false,
        ),
        when: When::Always,
    },
    Panel {
        id: "sizes",
        title: "Response sizes",
        rows: Rows::Sizes,
        when: When::Always,
    },
    Panel {
        id: "times",
        title: "Response times",
        rows: Rows::Times,
        when: When::Timed,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each list merges by its entry's rule, in the partial codec's merge of two pieces'
    /// tables and in the streamed merge's rule.
    #[test]
    fn every_list_merges_by_its_rule() {
        let one = |n: u64| crate::partial::SummaryTables {
            numbers: Vec::new(),
            days: Vec::new(),
            tables: LISTS.iter().map(|_| vec![(b"k".to_vec(), n)]).collect(),
        };
        let merged = one(3).merge(one(5));
        assert_eq!(merged.tables.len(), LISTS.len());
        for (i, l) in LISTS.iter().enumerate() {
            let want = match l.merge {
                Merge::Sum => 8,
                Merge::Max => 5,
            };
            assert_eq!(merged.tables[i], vec![(b"k".to_vec(), want)], "{}", l.name);
            assert_eq!(
                crate::partial::summary_list_merge(i)(3, 5),
                want,
                "{}",
                l.name
            );
            assert_eq!(
                crate::partial::summary_list_max(i),
                l.merge == Merge::Max,
                "{}",
                l.name
            );
        }
    }

    /// The panels' ids and the lists' and groups' names are unique, and every index a
    /// panel names is one of a list, a group or a row panel; every row panel fits the 3
    /// bits of a row visitor's key (checked as the crate builds).
    #[test]
    fn the_tables_name_what_there_is() {
        let mut ids = std::collections::HashSet::new();
        assert!(PANELS.iter().all(|p| ids.insert(p.id)), "a panel id twice");
        let mut names = std::collections::HashSet::new();
        assert!(LISTS.iter().all(|l| names.insert(l.name)));
        assert!(GROUPS.iter().all(|g| names.insert(g.name)));
        let rows_ok = |r: RowsOf| match r {
            RowsOf::List(t) => t < LISTS.len(),
            RowsOf::Group(g) => g < GROUPS.len(),
            RowsOf::Statics => true,
        };
        for p in PANELS {
            match p.rows {
                Rows::Keys {
                    rows,
                    bytes,
                    visitors,
                    ..
                } => {
                    assert!(rows_ok(rows), "{}", p.id);
                    assert!(bytes.is_none_or(|b| match b {
                        BytesOf::List(t) => t < LISTS.len(),
                        BytesOf::Group(g) => g < GROUPS.len(),
                    }));
                    assert!(visitors.is_none_or(|v| match v {
                        VisitorsOf::Rows(r) => r < ROW_PANELS,
                        VisitorsOf::Group(g) => g < GROUPS.len(),
                        VisitorsOf::Clients | VisitorsOf::Agents => true,
                    }));
                }
                Rows::Requests {
                    rows,
                    visitors,
                    bytes,
                    ..
                } => {
                    assert!(rows_ok(rows) && visitors < ROW_PANELS, "{}", p.id);
                    assert!(bytes == T_BYTES || bytes == T_NOT_FOUND_BYTES, "{}", p.id);
                }
                _ => {}
            }
        }
    }
}
