package main

import "github.com/grmdp/grmdp/dataset"

// readMessage reads and checks a message file, as federate step does.
var readMessage = dataset.ReadMessage
