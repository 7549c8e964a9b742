from copter_cli.app import main

main()
