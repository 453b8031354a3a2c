"""Files that come with messages: fetched to the chat's folder with a cap, checked, images made model-ready."""
