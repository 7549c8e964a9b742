from copter_cli.entry import main

main()
