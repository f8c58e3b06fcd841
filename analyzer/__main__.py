from analyzer.cli import console_main

console_main()
