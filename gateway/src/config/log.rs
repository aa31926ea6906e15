//! The `[log]` section: how the log is written (readable text for a person at a terminal, JSON
//! lines for a collector).

use serde::Deserialize;

use super::env::Overrides;
use super::error::KeyError;

/// The variable that overrides `log.format`.
pub const FORMAT_VAR: &str = "MCP_GATEWAY_LOG_FORMAT";

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLog {
    /// `auto` (text when standard error is a terminal, JSON lines otherwise), `text` or `json`.
    #[schemars(extend("default" = "auto", "x-env" = FORMAT_VAR))]
    format: Option<LogFormat>,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    #[default]
    Auto,
    Text,
    Json,
}

impl LogFormat {
    /// Whether lines are JSON, given whether they go to a terminal.
    pub fn json(self, terminal: bool) -> bool {
        match self {
            LogFormat::Auto => !terminal,
            LogFormat::Text => false,
            LogFormat::Json => true,
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "auto" => LogFormat::Auto,
            "text" => LogFormat::Text,
            "json" => LogFormat::Json,
            _ => return None,
        })
    }
}

/// Log settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogConfig {
    pub format: LogFormat,
}

impl LogConfig {
    pub(super) fn from_raw(raw: RawLog, vars: Overrides) -> Result<Self, KeyError> {
        let format = match vars.get(FORMAT_VAR) {
            Some(v) => LogFormat::parse(&v)
                .ok_or_else(|| KeyError::new(FORMAT_VAR, "must be auto, text or json"))?,
            None => raw.format.unwrap_or_default(),
        };
        Ok(LogConfig { format })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_is_text_on_a_terminal_and_json_elsewhere() {
        assert!(!LogFormat::Auto.json(true));
        assert!(LogFormat::Auto.json(false));
        assert!(LogFormat::Json.json(true));
        assert!(!LogFormat::Text.json(false));
        let env = [(FORMAT_VAR.to_string(), "xml".to_string())].into();
        let e = LogConfig::from_raw(RawLog::default(), Overrides(&env)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "MCP_GATEWAY_LOG_FORMAT: must be auto, text or json"
        );
    }
}
