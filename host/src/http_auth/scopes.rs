//! Which scopes a request needs: by JSON-RPC method and, for `tools/call`, the tool.

use super::{REFRESH_TOOL, RUN_SCRIPT_TOOL};
use crate::http_body::{RpcCall, RpcMessage};

/// What a body needs: by method, `params.name` for `tools/call`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Need {
    pub(super) read: bool,
    pub(super) run: bool,
    pub(super) refresh: bool,
}

impl Need {
    const ALL: Need = Need {
        read: true,
        run: true,
        refresh: true,
    };
    fn or(self, other: Need) -> Need {
        Need {
            read: self.read || other.read,
            run: self.run || other.run,
            refresh: self.refresh || other.refresh,
        }
    }
}

/// What a classified body (one message or a batch) needs; a body that is not JSON-RPC (see
/// [`RpcCall::messages`]) needs every scope.
pub(super) fn classify(call: &RpcCall) -> Need {
    if !call.is_json_rpc() {
        return Need::ALL;
    }
    call.messages
        .iter()
        .map(classify_one)
        .fold(Need::default(), Need::or)
}

fn classify_one(m: &RpcMessage) -> Need {
    let read = Need {
        read: true,
        ..Need::default()
    };
    let Some(method) = m.method.as_deref() else {
        // An answer to a request of the server (sampling, elicitation, roots).
        return Need::default();
    };
    match method {
        "initialize" | "ping" | "server/discover" | "logging/setLevel" => Need::default(),
        _ if method.starts_with("notifications/") => Need::default(),
        // A tool name that is missing or not a string: every scope.
        "tools/call" => match m.tool() {
            Some(RUN_SCRIPT_TOOL) => Need {
                run: true,
                ..Need::default()
            },
            Some(REFRESH_TOOL) => Need {
                refresh: true,
                ..Need::default()
            },
            Some(_) => read,
            None => Need::ALL,
        },
        _ => read,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(body: &[u8]) -> Need {
        super::classify(&RpcCall::parse(body))
    }

    const NONE: Need = Need {
        read: false,
        run: false,
        refresh: false,
    };
    const READ: Need = Need {
        read: true,
        run: false,
        refresh: false,
    };
    const RUN: Need = Need {
        read: false,
        run: true,
        refresh: false,
    };
    const REFRESH: Need = Need {
        read: false,
        run: false,
        refresh: true,
    };

    fn call(tool: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
        )
    }

    #[test]
    fn methods_and_tools_need_their_scope() {
        for (body, need) in [
            (call("get_skill"), READ),
            (call(RUN_SCRIPT_TOOL), RUN),
            (call(REFRESH_TOOL), REFRESH),
            (r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.into(), READ),
            (r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://a/SKILL.md"}}"#.into(), READ),
            (r#"{"jsonrpc":"2.0","id":1,"method":"some/future"}"#.into(), READ),
            (r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#.into(), NONE),
            (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.into(), NONE),
            (r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(), NONE),
            // An answer to a request of the server.
            (r#"{"jsonrpc":"2.0","id":"s-1","result":{}}"#.into(), NONE),
        ] {
            assert_eq!(classify(body.as_bytes()), need, "{body}");
        }
    }

    #[test]
    fn a_batch_needs_every_scope_of_its_messages() {
        let body = format!("  [{},{}]", call(RUN_SCRIPT_TOOL), call(REFRESH_TOOL));
        assert_eq!(
            classify(body.as_bytes()),
            Need {
                read: false,
                run: true,
                refresh: true
            }
        );
        let body = format!(
            r#"[{},{{"jsonrpc":"2.0","id":2,"method":"ping"}}]"#,
            call("list_skills")
        );
        assert_eq!(classify(body.as_bytes()), READ);
    }

    #[test]
    fn what_cannot_be_classified_needs_every_scope() {
        for body in [
            "",
            "not json",
            "[]",
            "42",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call""#,
            // A tool name that is not a string, or missing.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
            // Given twice: another parser could read the other one.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"run_script"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_skill","name":"run_script"}}"#,
            // `method` not a string, params not an object.
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#,
        ] {
            assert_eq!(classify(body.as_bytes()), Need::ALL, "{body}");
        }
    }
}
