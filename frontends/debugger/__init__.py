"""The replay debugger's interactive shell: commands, tensor views, watches (front end)."""
