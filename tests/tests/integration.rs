//! One integration binary (short link times) with a module per behaviour.

mod it;
