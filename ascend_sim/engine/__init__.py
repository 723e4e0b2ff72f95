"""The engine: the chip (launch, cores, GM), each core's front end that turns an Ascend C call into a record, the
fast engine, and the marker of high-level API calls the debugger stops on."""
