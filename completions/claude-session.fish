complete --keep-order --exclusive --command claude-session --arguments "(COMPLETE=fish claude-session -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"
