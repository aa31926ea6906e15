-- Replicas read the sessions ended lately (announcements they may have missed) every minute,
-- and the hourly sweep removes the old ones: both by when the session ended.
CREATE INDEX terminated_sessions_at ON terminated_sessions (terminated_at);
